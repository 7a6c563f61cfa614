//! Runs, scenarios and trials: what `corobench run` measures and stores.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::capacity::CapacitySettings;

use crate::claim::ClaimRecord;
use crate::counters::TrialCounters;
use crate::load::{LoadReport, LoadWarning};
use crate::machine::MachineProbe;
use crate::protocol::Protocol;
use crate::resource::{ResourceSample, ResourceSummary};
use crate::schedule::{ScenarioKey, Schedule, ScheduleKind, WireMode};

/// Where and with what a run was measured; travels with its data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub corobench_version: String,
    /// `git describe` of the corobench checkout, when it was built from one.
    pub corobench_commit: Option<String>,
    pub hostname: String,
    /// `PRETTY_NAME` of /etc/os-release.
    pub os: String,
    /// `uname -r`.
    pub kernel: String,
    pub cpu_model: String,
    pub cpu_count: u32,
    pub memory_bytes: u64,
    /// CPU list the targets were pinned to, e.g. `0`.
    pub server_cpus: String,
    /// CPU list the load generator threads were pinned to, e.g. `1`.
    pub generator_cpus: String,
    /// The load generator's event-loop backend.
    pub load_backend: String,
    /// Tool name to the version line it printed (`go` → `go version go1.26.8 linux/amd64`).
    pub tool_versions: BTreeMap<String, String>,
    /// Target name to the hash of the sources that were built and measured.
    pub target_sources: BTreeMap<String, String>,
    /// The spec file the run was made from (absolute), `None` for the
    /// embedded default suite; `run --resume` resolves body files against it.
    #[serde(default)]
    pub spec_path: Option<String>,
    /// The machines of a run with `[hosts]`: the server host first, then
    /// every generator host; empty when everything ran on this machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostProvenance>,
}

/// One machine of a run with `[hosts]`, as it described itself over SSH.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostProvenance {
    /// `server` or `generator`.
    pub role: String,
    /// The spec's `ssh://` address, or `pod/NAME` for a pod.
    pub address: String,
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpu_count: u32,
    /// What `corobench --version` printed there.
    pub corobench_version: String,
    /// The corobench executable used there.
    pub corobench_path: String,
    /// The CPU list given to `serve --cpus` or `load --cpus`, if any.
    pub cpus: Option<String>,
    /// The host's clock minus the coordinator's, in µs, measured over SSH
    /// before the first trial; `None` when it could not be measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_us: Option<i64>,
    /// The offset is within ± this (half the shortest round trip), in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_uncertainty_us: Option<i64>,
    /// The Kubernetes node a pod host ran on (`corobench k8s run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The container image a pod host ran (`corobench k8s run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
}

/// Where a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Complete,
    /// Stopped by Ctrl-C / SIGTERM (or a crash of corobench); `run --resume` finishes it.
    Interrupted,
    /// Every trial it ran failed: it measured nothing.
    Failed,
}

/// The corobench process measuring a run: its pid and the time it started
/// (clock ticks after boot, from `/proc/PID/stat`), so that a pid the kernel
/// has since given to another process is not taken for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunProcess {
    pub pid: u32,
    pub started: u64,
}

impl RunStatus {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Complete => "complete",
            Self::Interrupted => "interrupted",
            Self::Failed => "failed",
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One invocation of `corobench run`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// e.g. `20261122-063301-3f9a`: sortable by time, unique on one machine.
    pub id: String,
    pub started_at_unix_ms: i64,
    pub finished_at_unix_ms: Option<i64>,
    pub status: RunStatus,
    /// The suite's name (its file stem, or `default`).
    pub suite: String,
    /// The spec text exactly as read, so a run can be understood and repeated.
    pub spec_toml: String,
    /// Seed of the trial order.
    pub seed: u64,
    pub provenance: Provenance,
    /// The published claims the spec puts to the test, resolved when the
    /// run started: a report needs no catalog of targets to judge them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimRecord>,
    /// The target every other is compared with: the spec's `baseline`, or
    /// the run's `--baseline`; `None`: the first target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// `[capacity]`: the run searched each scenario's highest rate within
    /// these objectives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacitySettings>,
    /// The req/s precision the run aimed for (`until_ci`, a `budget`, or
    /// their flags), as it started: the report says which scenarios
    /// reached it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_goal: Option<PrecisionGoal>,
}

/// What an adaptive run aimed for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrecisionGoal {
    /// The req/s interval's half-width, relative to the median.
    pub fraction: f64,
    /// The run's measuring time, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
}

impl PrecisionGoal {
    /// The budget as a duration.
    #[must_use]
    pub fn budget(&self) -> Option<std::time::Duration> {
        self.budget_s
            .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
    }
}

/// The most trials per scenario (`trials`, `max_trials`).
pub const MAX_TRIALS: u32 = 10_000;

/// A run as stored, everything included: what the analysis reads.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    pub run: RunRecord,
    /// How many trials of each scenario the run plans.
    pub trials_per_scenario: u32,
    /// In plan order.
    pub scenarios: Vec<ScenarioRecord>,
    /// In the order they ran (`sequence`).
    pub trials: Vec<TrialRecord>,
    /// The scenarios' on-CPU profiles (`[run] profile`), in plan order.
    pub profiles: Vec<crate::ProfileRecord>,
}

/// What is sent to the target in one scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadRecord {
    /// The workload's name in the spec, e.g. `plaintext`, `io-10ms`.
    pub name: String,
    pub method: String,
    /// Path and query, e.g. `/io?ms=10`.
    pub path: String,
    pub body_bytes: u64,
    /// `idle_connections`: the trials hold the schedule's connections idle
    /// (each answered once) and measure settled RSS; no load is sent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idle: bool,
    /// HTTP/2 streams that carry another request beside the measured ones
    /// on every connection (head-of-line); absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<crate::BackgroundRecord>,
}

/// target × parameters × workload × schedule: one row of a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioRecord {
    /// Position in the plan, 0-based.
    pub index: u32,
    /// Stable, human-readable identity, e.g. `go-ants/pool_size=64/plaintext/c=64`.
    pub key: ScenarioKey,
    pub target: String,
    /// Every parameter of the target, defaults included.
    pub parameters: BTreeMap<String, String>,
    pub workload: WorkloadRecord,
    pub schedule: ScheduleKind,
    pub connections: u32,
    /// How the connections carried requests (keys absent when keep-alive, one at a time).
    #[serde(flatten)]
    pub wire: WireMode,
    /// What the connections spoke; absent for cleartext HTTP/1.1 (and in
    /// records made before the protocol was a dimension).
    #[serde(default, skip_serializing_if = "Protocol::is_http1")]
    pub protocol: Protocol,
    pub warmup_s: f64,
    pub duration_s: f64,
    /// Set for a scenario that runs a program target instead of loading a
    /// server; `workload`, `schedule` and `connections` then say nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<ProgramScenario>,
}

/// What a program scenario runs beside its program.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramScenario {
    /// The server target the program talks to, if it needs one.
    pub server: Option<ServerChoice>,
}

/// A server target with the parameters it runs with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerChoice {
    pub target: String,
    /// Every parameter, defaults included once the run is stored.
    pub parameters: BTreeMap<String, String>,
}

impl std::fmt::Display for ServerChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.target)?;
        for (name, value) in &self.parameters {
            write!(f, " {name}={value}")?;
        }
        Ok(())
    }
}

impl ScenarioRecord {
    /// The schedule this scenario was measured with.
    #[must_use]
    pub fn schedule(&self) -> Schedule {
        Schedule {
            kind: self.schedule,
            connections: self.connections,
            keepalive: self.wire.keepalive,
            pipeline: self.wire.pipeline,
            protocol: self.protocol,
            streams: self.wire.streams,
            tls_resume: self.wire.tls_resume,
        }
    }
}

/// How a trial ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialStatus {
    /// Measured; its figures count.
    Ok,
    /// The target crashed, never became healthy, or the load could not run.
    Failed,
}

impl TrialStatus {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Failed => "failed",
        }
    }
}

/// `/stats` task counts of the target around the measured window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskCounts {
    pub before: Option<u64>,
    pub peak: Option<u64>,
    pub after: Option<u64>,
}

/// Something a trial's reader must know.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TrialFlag {
    /// The generator, not the target, was the limit.
    GeneratorBound { utilization: f64 },
    /// Threads, tasks or memory did not return near the pre-load baseline.
    Leak { what: String },
    /// Some requests failed.
    Errors { error_rate: f64 },
    /// The server was already running at this URL: not started fresh for
    /// the trial, so it carried the state earlier trials left.
    AlreadyRunning { url: String },
    /// An open-loop request left more than `bound_us` after its intended
    /// send time: the offered load was not the steady rate planned.
    ScheduleNotKept { max_send_lag_us: u64, bound_us: u64 },
    /// The target ignored its stop signal until the stop timeout ran out
    /// and SIGKILL ended it: every trial waited that long.
    KilledAtStop { signal: String, waited_s: f64 },
}

impl fmt::Display for TrialFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::GeneratorBound { utilization } => {
                write!(
                    f,
                    "generator-bound ({:.0}% of its cores)",
                    utilization * 100.0
                )
            }
            Self::Leak { what } => write!(f, "leak: {what}"),
            Self::Errors { error_rate } => write!(f, "errors: {:.2}%", error_rate * 100.0),
            Self::AlreadyRunning { url } => write!(f, "already running at {url}, not fresh"),
            Self::ScheduleNotKept {
                max_send_lag_us,
                bound_us,
            } => write!(
                f,
                "schedule not kept (a request {:.1} ms late, bound {:.0} ms)",
                *max_send_lag_us as f64 / 1000.0,
                *bound_us as f64 / 1000.0
            ),
            Self::KilledAtStop { signal, waited_s } => {
                write!(f, "ignored {signal}, killed after {waited_s:.1} s")
            }
        }
    }
}

/// One measurement of one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    pub scenario_index: u32,
    /// 0-based repetition of this scenario.
    pub trial_index: u32,
    /// 0-based position in the run's interleaved order.
    pub sequence: u32,
    pub status: TrialStatus,
    /// Why a failed trial failed, with the target's exit status and stderr tail.
    pub failure: Option<String>,
    pub started_at_unix_ms: i64,
    pub load: Option<LoadReport>,
    pub resources: Option<ResourceSummary>,
    /// 10 Hz samples of the target's process tree over the measured window.
    pub resource_series: Vec<ResourceSample>,
    pub tasks: TaskCounts,
    pub flags: Vec<TrialFlag>,
    /// What a program target reported (program scenarios only); `resources`
    /// are then the server's, if the program had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<ProgramResult>,
    /// What the kernel counted for the server's tree and the generator's
    /// threads over the window; absent from program trials, remote trials
    /// and trials stored before corobench kept counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<TrialCounters>,
    /// What an idle trial (`idle_connections`) measured; it sends no load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<crate::IdleMeasurement>,
    /// The machine-speed probe run just before the trial; absent when the
    /// run turned it off, for trials on other hosts, and in runs stored
    /// before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<MachineProbe>,
    /// The target's database pool as its `/stats` told it before the load
    /// and after; absent where the target reports no pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<crate::pool::PoolWindow>,
}

/// A program's own figures from one trial, and its process tree's footprint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgramResult {
    /// One value per unit, in the order the program printed them (`req/s`,
    /// `p99-ms`, `B/op`, ...); several result lines reporting a unit give the
    /// median of their values.
    pub metrics: Vec<ProgramMetric>,
    /// The result lines as printed (Go benchmark format).
    pub lines: Vec<String>,
    /// From start to exit.
    pub elapsed_s: f64,
    /// The program's process tree while it ran (CPU, RSS, threads).
    pub resources: Option<ResourceSummary>,
}

/// One figure a program reported, named by its unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgramMetric {
    pub unit: String,
    pub value: f64,
}

impl ProgramResult {
    /// The value reported in `unit`.
    #[must_use]
    pub fn value(&self, unit: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|m| m.unit == unit)
            .map(|m| m.value)
    }
}

impl TrialFlag {
    /// The flag's kind as stored (`generator_bound`, `already_running`).
    #[must_use]
    pub fn id(&self) -> &'static str {
        match self {
            Self::GeneratorBound { .. } => "generator_bound",
            Self::Leak { .. } => "leak",
            Self::Errors { .. } => "errors",
            Self::AlreadyRunning { .. } => "already_running",
            Self::ScheduleNotKept { .. } => "schedule_not_kept",
            Self::KilledAtStop { .. } => "killed_at_stop",
        }
    }

    /// The flags a load report raises by itself, wherever the trial ran:
    /// a generator that was the limit, an open-loop schedule not kept, and
    /// requests that failed.
    #[must_use]
    pub fn of_load(load: &LoadReport) -> Vec<Self> {
        let mut flags = Vec::new();
        if load.generator_bound() {
            flags.push(Self::GeneratorBound {
                utilization: load.generator.utilization,
            });
        }
        let not_kept = load.warnings.iter().filter_map(|w| match *w {
            LoadWarning::ScheduleNotKept {
                max_send_lag_us,
                bound_us,
            } => Some((max_send_lag_us, bound_us)),
            _ => None,
        });
        // A merged report may hold one per generator: the latest says most.
        if let Some((max_send_lag_us, bound_us)) = not_kept.max() {
            flags.push(Self::ScheduleNotKept {
                max_send_lag_us,
                bound_us,
            });
        }
        if load.errors.total() > 0 {
            flags.push(Self::Errors {
                error_rate: load.error_rate,
            });
        }
        flags
    }
}

/// Lines of a failure's detail (a program's stderr) kept in its one-line form.
const FAILURE_DETAIL_LINES: usize = 3;

/// A failure on one line: its first line, and when that only introduces
/// what follows (`…; last lines of its stderr:`), the last lines that
/// follow, which hold the program's own message, joined by ` | `.
#[must_use]
pub fn failure_line(failure: &str) -> String {
    let mut lines = failure.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    if !first.ends_with(':') {
        return first.to_owned();
    }
    let detail: Vec<&str> = lines.collect();
    if detail.is_empty() {
        return format!("{first} (empty)");
    }
    let shown = &detail[detail.len().saturating_sub(FAILURE_DETAIL_LINES)..];
    format!("{first} {}", shown.join(" | "))
}

impl TrialRecord {
    /// Repetition `trial_index` of scenario `scenario_index`, at `sequence`
    /// in the run's order, started at `started_at_unix_ms`, with nothing
    /// measured yet: the one way a trial's record begins.
    #[must_use]
    pub fn started(
        scenario_index: u32,
        trial_index: u32,
        sequence: u32,
        started_at_unix_ms: i64,
    ) -> Self {
        Self {
            scenario_index,
            trial_index,
            sequence,
            status: TrialStatus::Ok,
            failure: None,
            started_at_unix_ms,
            load: None,
            resources: None,
            resource_series: Vec::new(),
            tasks: TaskCounts::default(),
            flags: Vec::new(),
            program: None,
            counters: None,
            idle: None,
            probe: None,
            pool: None,
        }
    }

    /// The trial failed, for `why` (a first line, then details).
    #[must_use]
    pub fn failed(mut self, why: impl Into<String>) -> Self {
        self.status = TrialStatus::Failed;
        self.failure = Some(why.into());
        self
    }

    /// The figure an adaptive run narrows: req/s of a load, or a program's
    /// first reported figure. `None` for a trial that measured nothing.
    #[must_use]
    pub fn headline(&self) -> Option<f64> {
        if self.status != TrialStatus::Ok {
            return None;
        }
        match (&self.load, &self.program) {
            (Some(load), _) => Some(load.requests_per_s),
            (None, Some(program)) => program.metrics.first().map(|m| m.value),
            (None, None) => None,
        }
    }
}
