//! Suite spec files (TOML) resolved into validated plans.
//!
//! [`resolve`] reads the spec text once, checks every key and value against
//! a [`Catalog`] of targets and the machine, the spec's bounds and the
//! process's [`Limits`], and expands sweeps into scenarios. Nothing
//! downstream sees a raw string. The resolver does no I/O beyond checking a
//! workload's body file; [`Limits::of_this_process`] reads `/proc` for the
//! binary. A [`QuickForm`] (servers and one request) is written as the spec
//! it stands for.

mod catalog;
mod defaults;
mod document;
mod error;
mod keys;
mod limits;
mod plan;
mod program;
mod quick;
mod resolve;
mod values;

pub use catalog::{Catalog, CatalogProgram, CatalogTarget, Domain};
pub use defaults::{DEFAULT_CONNECTIONS, DEFAULT_DURATION, DEFAULT_TRIALS, DEFAULT_WARMUP};
pub use error::SpecError;
pub use limits::{
    Limits, MAX_BODY_FILE, MAX_BODY_TEXT, MAX_CONNECTIONS, MAX_DURATION, MAX_GENERATOR_THREADS,
    MAX_PLAN_BYTES, MAX_RATE, MAX_SCENARIOS, MAX_TRIALS, MIN_RATE,
};
pub use plan::{
    Body, DEFAULT_BUDGET_GOAL, Expectation, HostAddress, Hosts, IDLE_TRIAL_ESTIMATE,
    MIN_TRIALS_FOR_INTERVAL, Measurement, Plan, PlannedClaim, PlannedScenario, Schedule,
    SkippedProtocol, SkippedTarget, Trials, Workload,
};
pub use quick::{QuickForm, QuickFormError, QuickProtocol, Sampling};
pub use resolve::{
    AddressError, MAX_GENERATOR_HOSTS, PrecisionGoal, at_rate, parse_address, precision_goal,
    resolve, resolve_within,
};
pub use values::{ValueError, parse_cpu_list, parse_duration, parse_fraction};

/// The suite `corobench run` runs when given none.
pub const DEFAULT_SUITE: &str = include_str!("../../../suites/default.toml");
