//! The resolved, validated spec: everything the runner needs, nothing raw.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use corobench_model::Schedule;
use corobench_model::{BackendChoice, CapacitySettings, ClaimRecord, ProgramScenario, ScenarioKey};

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
    /// Run the machine-speed probe before each trial (`[run] machine_probe`,
    /// default on; `corobench run --no-probe` turns it off).
    pub machine_probe: bool,
    pub server_cpus: Vec<usize>,
    pub generator_cpus: Vec<usize>,
    pub scenarios: Vec<PlannedScenario>,
    /// Targets the spec asked for that cannot run here, with the reason.
    pub skipped_targets: Vec<SkippedTarget>,
    /// Protocols a target was asked to speak but does not serve: its
    /// scenarios in that protocol are left out of the plan.
    pub skipped_protocols: Vec<SkippedProtocol>,
    /// The target every other is compared with (`baseline`), one the spec
    /// asks for; it may be skipped here.
    pub baseline: Option<String>,
    /// Published claims to judge on the run's trials (`[[claims]]`).
    pub claims: Vec<PlannedClaim>,
    /// `[capacity]`: search each scenario's highest rate within its
    /// objectives; the scenarios are then open loops at the first rate.
    pub capacity: Option<CapacitySettings>,
    /// `[hosts]`: the server and the generators run on other machines.
    pub hosts: Option<Hosts>,
    /// `[run] profile`: after the measured trials, one extra trial per
    /// scenario under `perf record`, kept apart from the figures.
    pub profile: bool,
}

/// `[hosts]`: where a trial's server and generators run, reached with the
/// system `ssh` (the user's own config and keys).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hosts {
    pub server: HostAddress,
    /// One generator per host; the schedule's connections (or rate) are
    /// split evenly over them.
    pub generators: Vec<HostAddress>,
    /// `--cpus` of `corobench serve` on the server host.
    pub server_cpus: Option<String>,
    /// `--cpus` of `corobench load` on each generator host, in order.
    pub generator_cpus: Vec<Option<String>>,
    /// The address generators reach the server by (default: its SSH host).
    pub server_address: String,
    /// The address the target binds on the server host (`serve --listen`).
    pub listen: String,
    /// corobench's path on every host; `None` copies this binary there.
    pub corobench: Option<String>,
    /// Where the copy goes on each host (relative to the login folder).
    pub install_dir: String,
    /// `--targets-dir` of `corobench serve` on the server host.
    pub targets_dir: Option<String>,
    /// `ssh -F FILE` (and `scp -F FILE`), for hosts the user's own config does not describe.
    pub ssh_config: Option<String>,
}

/// `ssh://[user@]host[:port]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostAddress {
    /// As written in the spec.
    pub text: String,
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

/// A claim of a spec, its sides resolved to scenario keys (or to why their
/// target cannot run here): exactly what the run stores.
pub type PlannedClaim = ClaimRecord;

/// A target the spec asked for that cannot run on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedTarget {
    pub target: String,
    /// What is missing, and how to get it where that is known.
    pub reason: String,
}

/// A protocol a target does not serve, so its scenarios in that protocol
/// are not planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedProtocol {
    pub target: String,
    pub protocol: corobench_model::Protocol,
    /// Why not, in its manifest's words.
    pub reason: String,
    /// How many scenarios were left out.
    pub scenarios: usize,
}

impl SkippedProtocol {
    /// `skipped go-gnet over tls (2 scenarios): gnet serves no TLS`.
    #[must_use]
    pub fn line(&self) -> String {
        let plural = if self.scenarios == 1 { "" } else { "s" };
        format!(
            "skipped {} over {} ({} scenario{plural}): {}",
            self.target, self.protocol, self.scenarios, self.reason
        )
    }
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
    /// Measuring time the run may take: after the first rounds each further
    /// trial goes to the scenario whose interval is widest, until every
    /// scenario meets `until_ci` or the time is spent.
    pub budget: Option<Duration>,
}

impl Trials {
    /// The req/s precision the run aims for, as recorded with it.
    #[must_use]
    pub fn goal(&self) -> Option<corobench_model::PrecisionGoal> {
        self.until_ci
            .map(|fraction| corobench_model::PrecisionGoal {
                fraction,
                budget_s: self.budget.map(|b| b.as_secs_f64()),
            })
    }
}

/// The req/s precision a budgeted run aims for when the spec sets none.
pub const DEFAULT_BUDGET_GOAL: f64 = 0.05;

/// The fewest trials that bound a 95% interval of a median: a budgeted run
/// gives every scenario at least this many before choosing among them.
pub const MIN_TRIALS_FOR_INTERVAL: u32 = 6;

/// What one scenario sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    pub name: String,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// What a correct answer looks like (`expect_*`); empty: any answer
    /// below 400.
    pub expect: Expectation,
    /// `idle_connections`: each scenario holds its schedule's connections
    /// idle (each answered once) and measures the server's settled RSS;
    /// no load is sent.
    pub idle: bool,
    /// `background`: HTTP/2 streams beside the measured ones on every
    /// connection carrying this GET (head-of-line blocking).
    pub background: Option<corobench_model::BackgroundRecord>,
}

/// A workload's `expect_status`, `expect_body` and `expect_header`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expectation {
    /// The exact status code.
    pub status: Option<u16>,
    /// A piece of text the body holds.
    pub body: Option<String>,
    /// A header, and a piece of text its value holds.
    pub header: Option<(String, String)>,
}

impl Expectation {
    /// Whether the workload expects anything at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.status.is_none() && self.body.is_none() && self.header.is_none()
    }
}

/// A request body, read by the runner (so planning stays cheap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    Empty,
    Text(String),
    File(PathBuf),
}

/// How the generator measures one scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measurement {
    pub duration: Duration,
    pub warmup: Duration,
    pub idle: Duration,
    pub timeout: Duration,
    pub generator_threads: u32,
    pub backend: BackendChoice,
}

/// target × parameters × workload × schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedScenario {
    pub index: u32,
    /// e.g. `go-ants/pool_size=64/queue_length=1024/plaintext/c=64`
    pub key: ScenarioKey,
    pub target: String,
    /// Values given in the spec (the runner adds the manifest's defaults).
    pub parameters: BTreeMap<String, String>,
    pub workload: Workload,
    pub schedule: Schedule,
    pub measurement: Measurement,
    /// The workload reads the database, so PostgreSQL must run.
    pub needs_database: bool,
    /// Set when the target is a program: it runs to completion (beside the
    /// server named here, if any) and `workload` and `schedule` say nothing.
    pub program: Option<ProgramScenario>,
}

/// What an idle trial (`idle_connections`) usually takes besides starting
/// and stopping its target: opening the connections and a settle window.
pub const IDLE_TRIAL_ESTIMATE: Duration = Duration::from_secs(2);

impl Plan {
    /// Wall time the run will take, assuming each trial spends `overhead`
    /// starting, checking and stopping its target; for a capacity search,
    /// the most it can take (every scenario trying `max_rates` rates).
    /// Saturates at `Duration::MAX` rather than overflow, whatever the plan
    /// holds.
    #[must_use]
    pub fn estimated_duration(&self, overhead: Duration) -> Duration {
        let trials = self.capacity.as_ref().map_or(self.trials.min, |c| {
            c.trials_per_rate.saturating_mul(c.max_rates)
        });
        self.scenarios
            .iter()
            .map(|s| {
                let m = &s.measurement;
                // A program's own length is not known before it runs; an
                // idle trial waits for RSS to settle: a second or two. The
                // idle after a load is the leak check's patience, most
                // often not needed, so it is not counted.
                let measured = if s.program.is_some() {
                    Duration::ZERO
                } else if s.workload.idle {
                    IDLE_TRIAL_ESTIMATE
                } else {
                    m.warmup.saturating_add(m.duration)
                };
                // `profile`: one more trial of each loaded scenario.
                let profiled = self.profile && s.program.is_none() && !s.workload.idle;
                measured
                    .saturating_add(overhead)
                    .saturating_mul(trials.saturating_add(u32::from(profiled)))
            })
            .fold(Duration::ZERO, Duration::saturating_add)
    }
}
