//! The on-CPU profile of a scenario's server: one extra trial per scenario,
//! taken after the measured ones, whose figures are never analysed; only
//! its folded stacks are kept (or why none could be taken).

use serde::{Deserialize, Serialize};

/// A scenario's profile as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileRecord {
    /// The scenario's position in the plan.
    pub scenario_index: u32,
    /// The sampling frequency `perf record -F` used.
    pub frequency_hz: u32,
    pub started_at_unix_ms: i64,
    #[serde(flatten)]
    pub outcome: ProfileOutcome,
}

/// What the profile trial produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ProfileOutcome {
    /// Stacks were sampled.
    Captured {
        /// Samples over all stacks.
        samples: u64,
        /// One line per distinct stack, `comm;outer;…;inner COUNT`. Kept in
        /// the store and drawn by the HTML report; left out of JSON, which
        /// says how to get it instead.
        #[serde(skip_serializing, default)]
        folded_stacks: String,
    },
    /// No profile: `perf` missing or refused, the trial failed, ...
    Skipped { reason: String },
}

impl ProfileRecord {
    /// The folded stacks, when the profile was captured.
    #[must_use]
    pub fn folded_stacks(&self) -> Option<&str> {
        match &self.outcome {
            ProfileOutcome::Captured { folded_stacks, .. } => Some(folded_stacks),
            ProfileOutcome::Skipped { .. } => None,
        }
    }
}
