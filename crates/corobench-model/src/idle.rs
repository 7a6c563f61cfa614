//! Memory per connection: what an idle trial measured (the server's RSS
//! holding N idle keep-alive connections) and the slope fitted over the
//! trials of a sweep of N.

use serde::{Deserialize, Serialize};

/// One idle trial: `connections` idle keep-alive connections, each answered
/// once, and the server tree's RSS once it settled.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdleMeasurement {
    pub connections: u32,
    pub rss_bytes: u64,
    /// False when RSS was still changing when the wait ran out.
    pub settled: bool,
    /// How long RSS took to settle (or the whole wait).
    pub waited_s: f64,
}

/// Bytes per connection of one target (with its parameters) and workload:
/// the least-squares slope of settled RSS against idle connections over
/// every successful trial of its scenarios.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryPerConnection {
    /// The target and the parameters that tell it apart, as scenarios are labelled.
    pub label: String,
    pub workload: String,
    /// The scenarios fitted (indices), one per number of connections.
    pub scenarios: Vec<u32>,
    /// The numbers of connections swept, ascending.
    pub connections: Vec<u32>,
    /// Trials fitted.
    pub trials: u32,
    /// `None` when there is no fit (fewer than two numbers of connections).
    pub bytes_per_connection: Option<f64>,
    /// The slope's confidence interval (`settings.confidence`); `None`
    /// with fewer than three trials.
    pub interval: Option<(f64, f64)>,
    /// RSS the line gives at zero connections.
    pub intercept_bytes: Option<f64>,
    /// Why there is no fit or interval, or a caution (unsettled trials).
    pub note: Option<String>,
}
