//! The experiment runner. A run is prepared once ([`prepare`]: builds,
//! payload, PostgreSQL, one verification per target), then its trials run
//! round by round in a seeded order ([`rounds`]), each stored as it ends.
//! The runner never prints: it emits [`events`] to an observer.
//!
//! Where a trial's schedule comes from: the spec's `[[workloads]]` are
//! resolved by `corobench-spec` into `PlannedScenario`s, each holding one
//! `corobench_model::Schedule`; [`trial`] hands that same value to the load
//! generator, and the run command stores it with the scenario. A new kind
//! of trial is a new [`rounds::TrialExecutor`]; a new trial order is a new
//! loop beside [`rounds`], as [`budget`] is: a run with a time budget.

pub mod budget;
pub mod capacity;
pub mod clock;
mod counters;
pub mod error;
pub mod events;
pub mod hosts;
mod idle_trial;
pub mod leak;
pub mod liveness;
pub(crate) mod machine_probe;
pub mod order;
pub mod prepare;
pub mod profile_trial;
pub(crate) mod program_trial;
pub mod provenance;
pub mod rounds;
pub(crate) mod server;
pub(crate) mod stats_probe;
pub mod trial;
pub(crate) mod window;

pub use budget::{BudgetTally, Budgeted, SinceStart, Unmet};
pub use capacity::{CapacityRun, CapacitySink, CapacityTally, RateScenario};
pub use events::{Phase, RunEvent, RunObserver};
pub use order::TrialSlot;
pub use prepare::{ExcludedTarget, PreparedRun, TrialEnvironment, prepare, prepare_for_hosts};
pub use rounds::{Rounds, RunTally, StoredTrials, TrialExecutor, TrialOutcome};
pub use trial::LocalTrials;
