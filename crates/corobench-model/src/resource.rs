//! Resources a target's process tree used while it was measured.

use serde::{Deserialize, Serialize};

/// One sample of the whole process tree (all processes of the target).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceSample {
    /// Milliseconds since sampling began.
    pub t_ms: u64,
    /// User CPU since the previous sample, in percent of one core (100 = one core busy).
    pub cpu_user_pct: f64,
    /// System CPU since the previous sample, in percent of one core.
    pub cpu_system_pct: f64,
    /// Resident memory summed over the tree.
    pub rss_bytes: u64,
    /// OS threads summed over the tree.
    pub threads: u32,
    /// Live processes in the tree.
    pub processes: u32,
    /// Voluntary context switches since the previous sample.
    pub ctx_voluntary: u64,
    /// Involuntary context switches since the previous sample.
    pub ctx_involuntary: u64,
}

/// The series condensed to the figures a report shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceSummary {
    pub samples: u32,
    /// Mean user + system CPU over the window, in percent of one core.
    pub cpu_pct_mean: f64,
    pub cpu_user_pct_mean: f64,
    pub cpu_system_pct_mean: f64,
    pub rss_mean_bytes: u64,
    pub rss_peak_bytes: u64,
    pub threads_peak: u32,
    pub processes_peak: u32,
    /// Context switches over the whole window.
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
}
