//! The resolved, validated spec: everything the runner needs, nothing raw.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// A checked spec, expanded into scenarios.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub name: String,
    pub description: String,
    /// The spec text as read, stored with the run.
    pub spec_text: String,
    /// Where it came from (`None` for the embedded default suite).
    pub spec_path: Option<PathBuf>,
    pub trials: Trials,
    pub seed: u64,
    pub server_cpus: Vec<usize>,
    pub generator_cpus: Vec<usize>,
    pub scenarios: Vec<PlannedScenario>,
    /// Targets the spec asked for that cannot run here, with the reason.
    pub skipped_targets: Vec<(String, String)>,
}

/// How many trials each scenario gets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trials {
    /// Trials every scenario gets before any adaptive stop is considered.
    pub min: u32,
    /// Adaptive runs keep adding rounds until the req/s confidence interval of
    /// every scenario is within this fraction of its median, or `max` is reached.
    pub until_ci: Option<f64>,
    pub max: u32,
}

/// What one scenario sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    pub name: String,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

/// A request body, read by the runner (so planning stays cheap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    Empty,
    Text(String),
    File(PathBuf),
}

/// How load is offered in one scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Schedule {
    Closed { connections: u32 },
    Open { rate_per_s: f64, connections: u32 },
}

impl Schedule {
    #[must_use]
    pub fn connections(&self) -> u32 {
        match *self {
            Self::Closed { connections } | Self::Open { connections, .. } => connections,
        }
    }

    /// `c=64` or `rate=2000/c=64`, as used in scenario keys.
    #[must_use]
    pub fn key(&self) -> String {
        match *self {
            Self::Closed { connections } => format!("c={connections}"),
            Self::Open {
                rate_per_s,
                connections,
            } => format!("rate={rate_per_s}/c={connections}"),
        }
    }
}

/// How the generator measures one scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measurement {
    pub duration: Duration,
    pub warmup: Duration,
    pub idle: Duration,
    pub timeout: Duration,
    pub generator_threads: u32,
    /// `auto` (io_uring where the kernel allows it, else epoll), `epoll` or `io_uring`.
    pub backend: &'static str,
}

/// target × parameters × workload × schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedScenario {
    pub index: u32,
    /// e.g. `go-ants/pool_size=64/queue_length=1024/plaintext/c=64`
    pub key: String,
    pub target: String,
    /// Values given in the spec (the runner adds the manifest's defaults).
    pub parameters: BTreeMap<String, String>,
    pub workload: Workload,
    pub schedule: Schedule,
    pub measurement: Measurement,
    /// The workload reads the database, so PostgreSQL must run.
    pub needs_database: bool,
}

impl Plan {
    /// Wall time the run will take, assuming each trial spends `overhead`
    /// starting, checking and stopping its target.
    #[must_use]
    pub fn estimated_duration(&self, overhead: Duration) -> Duration {
        self.scenarios
            .iter()
            .map(|s| {
                let m = &s.measurement;
                (m.warmup + m.duration + m.idle + overhead) * self.trials.min
            })
            .sum()
    }
}
