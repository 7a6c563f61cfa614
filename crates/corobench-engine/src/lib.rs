//! The lab's engine: a run is prepared once ([`prepare`]: builds, payload,
//! PostgreSQL, the gate of [`verification`]), then its trials run round by
//! round in a seeded order ([`rounds`], [`budget`], [`capacity`]), each
//! handed to the store as it ends. It never prints: it tells an observer
//! ([`events`]) what happens, and the command that drives it renders that.
//!
//! Where a trial's schedule comes from: the spec's `[[workloads]]` are
//! resolved by `corobench-spec` into `PlannedScenario`s, each holding one
//! `corobench_model::Schedule`; [`trial`] hands that same value to the load
//! generator, and the run command stores it with the scenario. A new kind
//! of trial is a new [`rounds::TrialExecutor`]; a new trial order is a new
//! loop beside [`rounds`], as [`budget`] is: a run with a time budget.

mod answers;
pub mod budget;
pub mod capacity;
pub mod clock;
mod counters;
pub mod error;
pub mod events;
#[cfg(test)]
mod fakes;
pub mod hosts;
mod idle_trial;
pub mod leak;
pub mod liveness;
pub mod machine_probe;
pub mod order;
pub mod prepare;
pub mod profile_trial;
pub mod program_trial;
pub mod provenance;
pub mod remote;
pub mod rounds;
pub mod scratch;
pub(crate) mod server;
pub(crate) mod stats_probe;
pub mod targets;
pub mod trial;
pub mod verification;
pub mod wall_clock;
pub(crate) mod window;
pub mod workspace;

pub use budget::{BudgetTally, Budgeted, SinceStart, Unmet};
pub use capacity::{CapacityRun, CapacitySink, CapacityTally, RateScenario};
pub use error::EngineError;
pub use events::{Phase, RunEvent, RunObserver};
pub use order::TrialSlot;
pub use prepare::{ExcludedTarget, PreparedRun, TrialEnvironment, prepare, prepare_for_hosts};
pub use rounds::{Rounds, RunTally, StoredTrials, TrialExecutor, TrialOutcome};
pub use trial::LocalTrials;
