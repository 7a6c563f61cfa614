//! The machine's own speed: a fixed CPU-bound probe run before each trial
//! on the server's CPUs and on the generator's, and how much it varied over
//! a run.

use serde::{Deserialize, Serialize};

/// What the probe measured before one trial: the speed of a fixed SHA-256
/// job on each CPU set, in MB hashed per second per CPU (the mean of the
/// set's CPUs, each running the job at once).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineProbe {
    pub server_mb_per_s: f64,
    pub generator_mb_per_s: f64,
}

impl MachineProbe {
    /// The speed on one CPU set.
    #[must_use]
    pub fn speed(&self, set: ProbeSet) -> f64 {
        match set {
            ProbeSet::Server => self.server_mb_per_s,
            ProbeSet::Generator => self.generator_mb_per_s,
        }
    }
}

/// The CPUs a probe ran on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeSet {
    Server,
    Generator,
}

/// How the probe's speed on one CPU set varied over a run's trials.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeSpread {
    /// Trials that carry a probe.
    pub trials: u32,
    pub median_mb_per_s: f64,
    pub min_mb_per_s: f64,
    pub max_mb_per_s: f64,
    /// Coefficient of variation: standard deviation ÷ mean.
    pub cv: f64,
    /// Half the max–min range ÷ the median: the machine's speed was within
    /// ± this of its median.
    pub half_range: f64,
}

/// Where the spread of a run's req/s came from, judged by the probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpreadSource {
    /// The probe varied about as much as the servers: the machine's own
    /// speed moved.
    Machine,
    /// The probe was steady and the servers were not.
    Servers,
    /// Neither varied much.
    Steady,
}

/// The machine's own speed over a run, from the probe of every trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineVariation {
    pub server: ProbeSpread,
    pub generator: ProbeSpread,
    /// The median, over scenarios with two or more `ok` trials, of the
    /// coefficient of variation of their req/s.
    pub servers_cv: Option<f64>,
    pub source: SpreadSource,
    /// The figures and the advice, in one sentence every format shows.
    pub text: String,
    /// Whether the analysis normalised each trial's req/s by its probe.
    #[serde(default)]
    pub normalised: bool,
}
