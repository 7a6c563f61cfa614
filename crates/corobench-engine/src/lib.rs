//! The lab's engine. A run is prepared once ([`prepare`]: builds, payload,
//! PostgreSQL, the gate of [`verification`]), then its trials run round by
//! round in a seeded order ([`rounds`], [`budget`], [`capacity`]), each
//! handed to the store as it ends. Every trial is the one skeleton of
//! [`trial`], whose middle step is a parameter (a load, idle connections, a
//! program, a profile) and whose server and generators run at a
//! [`trial::Place`]: [`local::ThisMachine`], or [`hosts::OnHosts`] reached
//! through a [`transport::Transport`]. The engine never prints: it tells an
//! observer ([`events`]) what happens, and the command that drives it
//! renders that.
//!
//! Where a trial's schedule comes from: the spec's `[[workloads]]` are
//! resolved by `corobench-spec` into `PlannedScenario`s, each holding one
//! `corobench_model::Schedule`; [`generator`] hands that same value to the
//! load generator, here or on a generator host, and the run command stores
//! it with the scenario. A new trial order is a new loop beside [`rounds`],
//! as [`budget`] is: a run with a time budget.

mod answers;
pub mod budget;
pub mod capacity;
mod connection;
pub mod cpu_claim;
pub mod error;
pub mod events;
#[cfg(test)]
mod fakes;
pub mod generator;
pub mod hosts;
pub mod k8s;
pub mod leak;
pub mod liveness;
pub mod local;
pub mod machine_probe;
pub mod order;
pub mod prepare;
pub mod protocol;
pub mod provenance;
pub mod rounds;
pub mod run;
pub mod scratch;
pub mod serve;
pub(crate) mod stats_probe;
pub mod targets;
pub mod transport;
pub mod trial;
pub mod verification;
pub mod wall_clock;
pub mod workspace;

pub use budget::{BudgetTally, Budgeted, SinceStart, Unmet};
pub use capacity::{CapacityRun, CapacitySink, CapacityTally, RateScenario};
pub use error::EngineError;
pub use events::{Phase, RunEvent, RunObserver};
pub use order::TrialSlot;
pub use prepare::{ExcludedTarget, PreparedRun, TrialEnvironment, prepare, prepare_for_hosts};
pub use rounds::{Rounds, RunTally, StoredTrials, TrialExecutor, TrialOutcome};
pub use trial::{Halt, Trials};
