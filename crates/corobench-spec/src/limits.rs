//! The bounds every spec value must stay within (docs/spec.md lists them).
//!
//! The bounds keep every product and sum the runner and the estimate compute
//! far from overflow, and refuse at planning time what could never run.

use std::time::Duration;

/// The longest `duration`, `warmup`, `idle` or `timeout`: a day.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);
/// The most trials per scenario (`trials`, `max_trials`).
pub const MAX_TRIALS: u32 = 10_000;
/// The most generator threads.
pub const MAX_GENERATOR_THREADS: u32 = 1_024;
/// The most connections of one scenario: the generator reaches one server
/// port from one address, so each connection needs a local port of its own.
pub const MAX_CONNECTIONS: u32 = 65_535;
/// The lowest open-loop rate, requests per second.
pub const MIN_RATE: f64 = 0.001;
/// The highest open-loop rate, requests per second.
pub const MAX_RATE: f64 = 10_000_000.0;
