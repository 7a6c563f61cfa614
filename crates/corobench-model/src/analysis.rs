//! What `corobench` concludes from stored runs: per-scenario summaries with
//! confidence intervals, comparisons with p-values, sweeps and warnings.
//!
//! These types are computed once (by the binary's `analyze` module) and read
//! by every reporter, so all output formats agree. Figures a reporter shows
//! verbatim (benchstat's `± 3%`, `+12.34%`, `p=0.002 n=6+6`) are stored as
//! text here; reporters compute nothing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::capacity::CapacityAnalysis;

use crate::claim::ClaimVerdict;
use crate::counters::PerRequest;
use crate::histogram::{LatencyHistogram, LatencySummary, PercentileValue};
use crate::load::{ErrorCounts, LoadWarning};
use crate::machine::{MachineProbe, MachineVariation};
use crate::pool::PoolFigure;
use crate::resource::ResourceSample;
use crate::run::{RunRecord, ScenarioRecord, TrialFlag, TrialRecord, TrialStatus};
use crate::tls_figure::TlsFigure;

/// Version of the `corobench report --format json` and `corobench compare
/// --format json` documents; bumped on incompatible change.
pub const ANALYSIS_SCHEMA_VERSION: u32 = 1;

/// Which direction of a metric is an improvement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
}

/// A figure read from every trial and summarised per scenario. Serialised
/// as its [`Metric::id`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    RequestsPerS,
    LatencyMeanUs,
    LatencyP50Us,
    LatencyP99Us,
    LatencyP999Us,
    ServerCpuPct,
    PeakRssBytes,
    ErrorRate,
    /// What a request cost the server or the generator in the kernel and
    /// the scheduler (`syscalls/req`, `gen sys µs/req`).
    PerRequest(PerRequest),
    /// What the target's database pool counted over a trial (`pool reuse`).
    Pool(PoolFigure),
    /// A figure of a trial over TLS (`handshake p99`); trials in cleartext
    /// have none, so these are not in [`Metric::ALL`] but follow the
    /// trials that have them, as program figures do.
    Tls(TlsFigure),
    /// A figure a program target reported, named by its unit (`req/s`,
    /// `p99-ms`, `B/op`, `tasks/s`).
    Program(ProgramUnit),
}

/// The unit a program figure is reported in. Units are interned: each
/// distinct unit is stored once for the life of the process, so a metric
/// stays a small `Copy` value wherever it is used as a key. A process sees a
/// handful of units; the few bytes they keep are the price of that.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProgramUnit {
    unit: &'static str,
    id: &'static str,
}

impl ProgramUnit {
    /// The prefix of a program metric's id: `program:req/s`.
    pub const ID_PREFIX: &'static str = "program:";

    /// The unit `unit`, interned.
    #[must_use]
    pub fn new(unit: &str) -> Self {
        static UNITS: std::sync::Mutex<BTreeMap<String, ProgramUnit>> =
            std::sync::Mutex::new(BTreeMap::new());
        let mut units = UNITS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *units.entry(unit.to_owned()).or_insert_with(|| Self {
            unit: Box::leak(unit.to_owned().into_boxed_str()),
            id: Box::leak(format!("{}{unit}", Self::ID_PREFIX).into_boxed_str()),
        })
    }

    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.unit
    }

    /// Whether more is better: rates (`…/s`) and counts of work done;
    /// everything else (time, memory, allocations, errors) is a cost.
    #[must_use]
    pub fn better(self) -> Better {
        const MORE_IS_BETTER: [&str; 3] = ["requests", "completed", "tasks"];
        if self.unit.ends_with("/s") || MORE_IS_BETTER.contains(&self.unit) {
            Better::Higher
        } else {
            Better::Lower
        }
    }
}

impl Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = String::deserialize(deserializer)?;
        Self::from_id(&id).ok_or_else(|| serde::de::Error::custom(format!("unknown metric `{id}`")))
    }
}

/// How a metric's values are measured, for formatting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricUnit {
    /// Requests per second.
    PerSecond,
    Microseconds,
    /// Percent of one CPU core (200 = two cores busy).
    PercentOfCore,
    Bytes,
    /// A fraction in 0..=1.
    Fraction,
    /// A figure in the unit a program printed beside it.
    Reported,
    /// A count per complete response (system calls, context switches).
    PerRequest,
}

impl MetricUnit {
    /// The unit as written after a raw number.
    #[must_use]
    pub fn symbol(self) -> &'static str {
        match self {
            Self::PerSecond => "req/s",
            Self::Microseconds => "µs",
            Self::PercentOfCore => "% of a core",
            Self::Bytes => "bytes",
            Self::Fraction => "fraction",
            Self::Reported => "as reported",
            Self::PerRequest => "per request",
        }
    }
}

impl Metric {
    /// Every metric, in the order reports show them.
    pub const ALL: [Self; 21] = [
        Self::RequestsPerS,
        Self::LatencyMeanUs,
        Self::LatencyP50Us,
        Self::LatencyP99Us,
        Self::LatencyP999Us,
        Self::ServerCpuPct,
        Self::PeakRssBytes,
        Self::ErrorRate,
        Self::PerRequest(PerRequest::ALL[0]),
        Self::PerRequest(PerRequest::ALL[1]),
        Self::PerRequest(PerRequest::ALL[2]),
        Self::PerRequest(PerRequest::ALL[3]),
        Self::PerRequest(PerRequest::ALL[4]),
        Self::PerRequest(PerRequest::ALL[5]),
        Self::PerRequest(PerRequest::ALL[6]),
        Self::PerRequest(PerRequest::ALL[7]),
        Self::PerRequest(PerRequest::ALL[8]),
        Self::PerRequest(PerRequest::ALL[9]),
        Self::Pool(PoolFigure::ALL[0]),
        Self::Pool(PoolFigure::ALL[1]),
        Self::Pool(PoolFigure::ALL[2]),
    ];

    /// The stable identifier used in JSON and CSV.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::RequestsPerS => "requests_per_s",
            Self::LatencyMeanUs => "latency_mean_us",
            Self::LatencyP50Us => "latency_p50_us",
            Self::LatencyP99Us => "latency_p99_us",
            Self::LatencyP999Us => "latency_p99_9_us",
            Self::ServerCpuPct => "server_cpu_pct",
            Self::PeakRssBytes => "peak_rss_bytes",
            Self::ErrorRate => "error_rate",
            Self::PerRequest(cost) => cost.id(),
            Self::Pool(figure) => figure.id(),
            Self::Tls(figure) => figure.id(),
            Self::Program(unit) => unit.id,
        }
    }

    /// The short column heading.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::RequestsPerS => "req/s",
            Self::LatencyMeanUs => "mean",
            Self::LatencyP50Us => "p50",
            Self::LatencyP99Us => "p99",
            Self::LatencyP999Us => "p99.9",
            Self::ServerCpuPct => "CPU",
            Self::PeakRssBytes => "peak RSS",
            Self::ErrorRate => "errors",
            Self::PerRequest(cost) => cost.label(),
            Self::Pool(figure) => figure.label(),
            Self::Tls(figure) => figure.label(),
            Self::Program(unit) => unit.unit,
        }
    }

    /// A longer name for chart titles and help.
    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Self::RequestsPerS => "throughput (complete responses per second)",
            Self::LatencyMeanUs => "mean latency",
            Self::LatencyP50Us => "median latency (p50)",
            Self::LatencyP99Us => "99th percentile latency",
            Self::LatencyP999Us => "99.9th percentile latency",
            Self::ServerCpuPct => "server CPU, mean over the window (100% = one core)",
            Self::PeakRssBytes => "server peak resident memory",
            Self::ErrorRate => "failed requests over all requests",
            Self::PerRequest(cost) => cost.description(),
            Self::Pool(figure) => figure.description(),
            Self::Tls(figure) => figure.description(),
            Self::Program(_) => "a figure the program reported, in its own unit",
        }
    }

    #[must_use]
    pub fn unit(self) -> MetricUnit {
        match self {
            Self::RequestsPerS => MetricUnit::PerSecond,
            Self::LatencyMeanUs | Self::LatencyP50Us | Self::LatencyP99Us | Self::LatencyP999Us => {
                MetricUnit::Microseconds
            }
            Self::ServerCpuPct => MetricUnit::PercentOfCore,
            Self::PeakRssBytes => MetricUnit::Bytes,
            Self::ErrorRate => MetricUnit::Fraction,
            Self::PerRequest(cost) => cost.unit(),
            Self::Pool(figure) => figure.unit(),
            Self::Tls(figure) => figure.unit(),
            Self::Program(_) => MetricUnit::Reported,
        }
    }

    /// More throughput is better; everything else is a cost.
    #[must_use]
    pub fn better(self) -> Better {
        match self {
            Self::RequestsPerS => Better::Higher,
            Self::Program(unit) => unit.better(),
            Self::Pool(figure) => figure.better(),
            Self::Tls(figure) => figure.better(),
            _ => Better::Lower,
        }
    }

    /// The metric's value in one trial: `None` for a failed trial, a trial
    /// without a load report, latency of a trial without a single response,
    /// and resources that were not sampled.
    #[must_use]
    pub fn value(self, trial: &TrialRecord) -> Option<f64> {
        if trial.status != TrialStatus::Ok {
            return None;
        }
        let resources = trial.resources.as_ref().filter(|r| r.samples > 0);
        // A program trial has no load; its server (if any) was sampled.
        match self {
            Self::Program(unit) => return trial.program.as_ref()?.value(unit.unit),
            Self::ServerCpuPct => return resources.map(|r| r.cpu_pct_mean),
            Self::PeakRssBytes => return resources.map(|r| r.rss_peak_bytes as f64),
            Self::PerRequest(cost) => return cost.value(trial),
            Self::Pool(figure) => return figure.value(trial),
            Self::Tls(figure) => return figure.value(trial),
            _ => {}
        }
        let load = trial.load.as_ref()?;
        let latency = &load.latency.histogram;
        let percentile =
            |p: f64| (latency.count() > 0).then(|| latency.value_at_percentile_us(p) as f64);
        match self {
            Self::RequestsPerS => Some(load.requests_per_s),
            Self::LatencyMeanUs => (latency.count() > 0).then_some(load.latency.summary.mean_us),
            Self::LatencyP50Us => percentile(50.0),
            Self::LatencyP99Us => percentile(99.0),
            Self::LatencyP999Us => percentile(99.9),
            Self::ErrorRate => Some(load.error_rate),
            Self::ServerCpuPct
            | Self::PeakRssBytes
            | Self::PerRequest(_)
            | Self::Pool(_)
            | Self::Tls(_)
            | Self::Program(_) => None,
        }
    }

    /// The short word a claim or a `--fail-on` rule names a server metric
    /// by (`rps`, `p99`, ...); `None` for program figures, which are named
    /// `program:UNIT`.
    #[must_use]
    pub fn word(self) -> Option<&'static str> {
        Some(match self {
            Self::RequestsPerS => "rps",
            Self::LatencyMeanUs => "mean",
            Self::LatencyP50Us => "p50",
            Self::LatencyP99Us => "p99",
            Self::LatencyP999Us => "p99.9",
            Self::ServerCpuPct => "cpu",
            Self::PeakRssBytes => "rss",
            Self::ErrorRate => "error_rate",
            Self::PerRequest(cost) => cost.word(),
            Self::Pool(figure) => figure.word(),
            Self::Tls(figure) => figure.id(),
            Self::Program(_) => return None,
        })
    }

    /// The server metric named by its [`Metric::word`].
    #[must_use]
    pub fn from_word(word: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .chain(Self::TLS)
            .chain([Self::SERVER_CPU])
            .find(|m| m.word() == Some(word))
    }

    /// The metric a person names: its word (`rps`), the label a table
    /// prints (`req/s`, `CPU`, case aside) or `program:UNIT`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        if let Some(unit) = name.strip_prefix(ProgramUnit::ID_PREFIX) {
            return (!unit.is_empty()).then(|| Self::Program(ProgramUnit::new(unit)));
        }
        Self::from_word(name).or_else(|| {
            Self::ALL
                .into_iter()
                .find(|m| m.label().eq_ignore_ascii_case(name))
        })
    }

    /// Every server metric's word, in report order, for error messages.
    #[must_use]
    pub fn words() -> Vec<&'static str> {
        Self::ALL.into_iter().filter_map(Self::word).collect()
    }

    /// The metric named by its [`Metric::id`].
    #[must_use]
    pub fn from_id(id: &str) -> Option<Self> {
        if let Some(unit) = id.strip_prefix(ProgramUnit::ID_PREFIX) {
            return (!unit.is_empty()).then(|| Self::Program(ProgramUnit::new(unit)));
        }
        Self::ALL
            .into_iter()
            .chain(Self::TLS)
            .chain([Self::SERVER_CPU])
            .find(|m| m.id() == id)
    }

    /// The server's CPU time per request, user and system together: only
    /// in scenarios whose split is below the ticks' resolution
    /// ([`crate::cpu_split`]), so not in [`Metric::ALL`].
    pub const SERVER_CPU: Self = Self::PerRequest(PerRequest::SERVER_CPU);

    /// Every TLS figure, in report order.
    pub const TLS: [Self; 6] = [
        Self::Tls(TlsFigure::ALL[0]),
        Self::Tls(TlsFigure::ALL[1]),
        Self::Tls(TlsFigure::ALL[2]),
        Self::Tls(TlsFigure::ALL[3]),
        Self::Tls(TlsFigure::ALL[4]),
        Self::Tls(TlsFigure::ALL[5]),
    ];

    /// The TLS figures of a trial: all of them over TLS, none in cleartext.
    pub fn of_tls(trial: &TrialRecord) -> impl Iterator<Item = Self> + '_ {
        let over_tls = trial.load.as_ref().is_some_and(|l| l.tls.is_some());
        Self::TLS.into_iter().filter(move |_| over_tls)
    }

    /// The figures a program reported in a trial, as metrics.
    pub fn of_program(trial: &TrialRecord) -> impl Iterator<Item = Self> + '_ {
        trial
            .program
            .iter()
            .flat_map(|p| p.metrics.iter())
            .map(|m| Self::Program(ProgramUnit::new(&m.unit)))
    }
}

/// A metric's identity, as listed at the top of a JSON report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricInfo {
    pub id: Metric,
    pub label: String,
    pub description: String,
    pub unit: MetricUnit,
    pub better: Better,
}

impl From<Metric> for MetricInfo {
    fn from(metric: Metric) -> Self {
        Self {
            id: metric,
            label: metric.label().to_owned(),
            description: metric.description().to_owned(),
            unit: metric.unit(),
            better: metric.better(),
        }
    }
}

/// The median of a scenario's trial values with its order-statistic
/// confidence interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricSummary {
    /// Trials with a value.
    pub n: usize,
    pub median: f64,
    /// Lower bound; `None` when too few trials bound it (−∞).
    pub ci_lo: Option<f64>,
    /// Upper bound; `None` when too few trials bound it (+∞).
    pub ci_hi: Option<f64>,
    /// The confidence the interval actually achieves (≥ the requested level).
    pub ci_confidence: f64,
    /// benchstat's spread of the interval around the median: `3%`; `?`
    /// where a spread means nothing (bounds on both sides of 0, or a median
    /// of 0 with an interval above it: reports then show the interval); and
    /// for an interval too few trials leave open, the count it needs: `n<6`.
    pub ci_text: String,
    pub min: f64,
    pub max: f64,
}

/// How a compared value moved, judged by the metric's [`Better`] direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Improved,
    Regressed,
    /// Not significant at alpha (`~`), or no change at all.
    NoDifference,
    /// The baseline is 0, so no ratio exists (`?`).
    Undefined,
}

/// How a comparison's change was estimated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeEstimator {
    /// exp(median of every ln(value_i) − ln(baseline_j)), with Moses's
    /// interval: the interval that inverts the Mann–Whitney U test.
    #[default]
    HodgesLehmann,
    /// value median ÷ baseline median, without an interval: a trial value
    /// at or below 0 (an error rate of 0) has no logarithm.
    MedianRatio,
}

/// One metric of one scenario against its baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricComparison {
    pub metric: Metric,
    /// The baseline's median.
    pub baseline: f64,
    /// The compared scenario's median.
    pub value: f64,
    /// The change value/baseline, estimated once for every report and the
    /// gate: the Hodges–Lehmann ratio of the trial values (see
    /// [`ChangeEstimator`]); `None` when the baseline is 0 and the value is not.
    pub ratio: Option<f64>,
    /// Moses's interval of `ratio` at the analysis' confidence; `None` with
    /// too few trials (fewer than 4 a side at 95%) or for a median ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_lo: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_hi: Option<f64>,
    /// The confidence the interval achieves (at least the requested one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_confidence: Option<f64>,
    /// How `ratio` was estimated.
    #[serde(default)]
    pub estimator: ChangeEstimator,
    /// Two-sided Mann–Whitney U test on the trial values: the significance
    /// of the same comparison.
    pub p_value: f64,
    pub n_baseline: usize,
    pub n: usize,
    /// p ≤ alpha.
    pub significant: bool,
    pub verdict: Verdict,
    /// The change with its interval, significant or not:
    /// `-10.31% [-12.05%, -8.40%]`, `-10.31%` without an interval, `?`
    /// without a ratio.
    #[serde(default)]
    pub change_text: String,
    /// What a table's delta column shows: `~` when p > alpha, else
    /// `change_text` (`0.00%` for equal medians of a median ratio).
    pub delta_text: String,
    /// `p=0.002 n=6+6`.
    pub note_text: String,
}

/// A scenario compared with its baseline scenario in the same run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioComparison {
    /// Index into [`RunAnalysis::scenarios`].
    pub scenario: usize,
    /// Index into [`RunAnalysis::scenarios`] of the baseline.
    pub baseline: usize,
    pub metrics: Vec<MetricComparison>,
}

/// One trial as the analysis saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialAnalysis {
    pub trial_index: u32,
    pub sequence: u32,
    pub status: TrialStatus,
    pub failure: Option<String>,
    pub started_at_unix_ms: i64,
    /// Every metric this trial has a value for.
    pub values: BTreeMap<Metric, f64>,
    pub flags: Vec<TrialFlag>,
    pub load_warnings: Vec<LoadWarning>,
    /// The target's resources over the measured window.
    pub resource_series: Vec<ResourceSample>,
    /// The machine-speed probe run before the trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<MachineProbe>,
}

/// The latency distribution of all `ok` trials of a scenario, merged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergedLatency {
    /// Trials merged.
    pub trials: usize,
    #[serde(flatten)]
    pub summary: LatencySummary,
    /// Latency at percentiles from 50% to 99.999%, for spectrum charts.
    pub spectrum: Vec<PercentileValue>,
    /// Open loop only: the spectrum measured from each request's actual send.
    pub spectrum_uncorrected: Option<Vec<PercentileValue>>,
    #[serde(rename = "hdr_v2_base64")]
    pub histogram: LatencyHistogram,
}

/// Everything concluded about one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioAnalysis {
    #[serde(flatten)]
    pub scenario: ScenarioRecord,
    /// The target and the parameters that tell this scenario apart from the
    /// target's other scenarios, e.g. `go-ants pool_size=64`.
    pub label: String,
    pub trials_planned: u32,
    pub trials_ok: u32,
    pub trials_failed: u32,
    pub metrics: BTreeMap<Metric, MetricSummary>,
    pub latency: Option<MergedLatency>,
    /// Failed requests by kind, summed over the `ok` trials.
    pub errors: ErrorCounts,
    /// The `ok` trial whose req/s is nearest the median, for detail charts.
    pub representative_trial: Option<u32>,
    pub trials: Vec<TrialAnalysis>,
    /// Indices into the analysis' `warnings` that concern this scenario.
    pub warnings: Vec<usize>,
}

/// One point of a sweep: a scenario at one value of the swept dimension.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The dimension's value as written in the scenario key.
    pub x: String,
    /// The same value as a number, when it is one.
    pub x_value: Option<f64>,
    /// Index into [`RunAnalysis::scenarios`].
    pub scenario: usize,
}

/// The scenarios of one target that differ only in the swept dimension.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepSeries {
    pub label: String,
    pub target: String,
    /// Ordered by the dimension's value.
    pub points: Vec<SweepPoint>,
    /// The Universal Scalability Law fitted to the series, for sweeps over
    /// a concurrency (connections, a pool size, workers); `None` for others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scalability: Option<Scalability>,
}

/// A fitted figure with its bootstrap interval; a bound is `None` where the
/// data leave it unbounded (an N* when κ may be 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedValue {
    pub estimate: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

/// Gunther's Universal Scalability Law fitted to a series' trials,
/// X(N) = λN / (1 + σ(N − 1) + κN(N − 1)), with percentile-bootstrap
/// intervals; or why the data do not support a fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scalability {
    /// The figure fitted against N: `requests_per_s` or a program's rate.
    pub metric: Metric,
    /// (N, value) points fitted: one per successful trial.
    pub points: usize,
    /// `None` when the fit failed; `note` says why.
    pub fit: Option<UslEstimates>,
    /// Why there is no fit, or what the fit cannot tell (no retrograde
    /// region in the measured range).
    pub note: Option<String>,
}

/// λ, σ, κ and the peak of a USL fit, each with its interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UslEstimates {
    /// Throughput of one client.
    pub lambda: FittedValue,
    /// Contention: the share of the work that serialises.
    pub sigma: FittedValue,
    /// Crosstalk: the cost of keeping N clients coherent.
    pub kappa: FittedValue,
    /// N* = √((1 − σ)/κ); `None` when the fit has no retrograde region.
    pub peak_concurrency: Option<FittedValue>,
    /// The highest throughput of the curve: X(N*), or the ceiling λ/σ
    /// without a peak (`None` when σ = 0 too: no limit in sight).
    pub peak_throughput: Option<FittedValue>,
    /// The κ interval reaches 0: the data are consistent with no peak.
    pub kappa_indistinguishable_from_zero: bool,
    pub confidence: f64,
    pub resamples: usize,
}

impl UslEstimates {
    /// The fitted curve at `concurrency`, for drawing it.
    #[must_use]
    pub fn throughput_at(&self, concurrency: f64) -> f64 {
        let (lambda, sigma, kappa) = (
            self.lambda.estimate,
            self.sigma.estimate,
            self.kappa.estimate,
        );
        let n = concurrency;
        lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
    }
}

/// A workload measured at several values of one dimension (a target
/// parameter, `connections` or `rate_per_s`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub workload: String,
    pub dimension: String,
    /// Every value of the dimension is a number (the axis is numeric).
    pub numeric: bool,
    pub series: Vec<SweepSeries>,
}

/// What a warning is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    TooFewTrialsForCi,
    TooFewTrialsToDetect,
    WideCi,
    GeneratorBound,
    ScheduleMissed,
    /// An open-loop request left later than the bound after its intended
    /// send time.
    ScheduleNotKept,
    /// A difference from the baseline smaller than the machine's own
    /// speed varied during the run.
    WithinMachineVariation,
    /// How much the machine's own speed varied over the run, and whether
    /// the spread came from the machine or from the servers.
    MachineSpeed,
    Leak,
    Errors,
    FailedTrials,
    MissingTrials,
    NoBaseline,
    IdenticalValues,
    ProvenanceDiffers,
    Unmatched,
    /// A run compared with itself.
    SameRun,
    /// A closed loop's req/s is not connections ÷ mean latency.
    LittlesLaw,
    /// A server measured where it already ran, not started fresh per trial.
    NotFresh,
    /// A kernel counter was refused, so its per-request metric is absent.
    CountersMissing,
    /// A kept-alive scenario's server closed its connections, so the
    /// generator connected again inside the window.
    Reconnects,
    /// The target ignored its stop signal until SIGKILL.
    KilledAtStop,
    /// A part of the server's CPU split spans too few clock ticks to be
    /// shown; the total per request is shown instead.
    CpuSplitBelowResolution,
    /// An HTTP/2 background request was never answered in a trial's
    /// window: nothing ran beside the measured streams.
    BackgroundUnanswered,
}

/// Something the reader must know, said so that it tells them what to do.
/// Scenarios with the same message share one warning; what differs between
/// them (how many trials, how late) is in `details`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    pub kind: WarningKind,
    /// What was found and what to do, the same for every scenario concerned.
    pub message: String,
    /// Keys of the scenarios concerned; empty when it concerns the whole run.
    pub scenarios: Vec<String>,
    /// What was found in each scenario, by key (`in 3 of 6 trials`), for
    /// the scenarios where it says more than the message.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub details: BTreeMap<String, String>,
    /// The metrics it is about; empty when it is about the scenario or the
    /// run as a whole. A view that does not show a metric leaves out the
    /// warnings about it alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<Metric>,
}

impl Warning {
    /// A warning about the scenarios or the run as a whole.
    #[must_use]
    pub fn new(kind: WarningKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            scenarios: Vec::new(),
            details: BTreeMap::new(),
            metrics: Vec::new(),
        }
    }
}

/// The settings an analysis was computed with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalysisSettings {
    /// Significance level of the U test.
    pub alpha: f64,
    /// Requested confidence of every interval.
    pub confidence: f64,
    /// A confidence interval wider than this fraction of its median is flagged.
    pub wide_ci_fraction: f64,
    /// The target every other target is compared with, within a run.
    pub baseline_target: Option<String>,
    /// Each trial's req/s was normalised by its machine-speed probe.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub normalise_by_probe: bool,
}

/// One run, analysed: what `corobench report` renders.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunAnalysis {
    pub schema_version: u32,
    /// Always `run_analysis`.
    pub kind: String,
    pub run: RunRecord,
    pub trials_per_scenario: u32,
    pub settings: AnalysisSettings,
    /// The run's published claims, each with its verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimVerdict>,
    /// A run that searched capacity (`[capacity]`): each search's rates,
    /// capacity and comparison with the baseline target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityAnalysis>,
    pub metrics: Vec<MetricInfo>,
    /// In plan order.
    pub scenarios: Vec<ScenarioAnalysis>,
    pub comparisons: Vec<ScenarioComparison>,
    pub sweeps: Vec<Sweep>,
    pub warnings: Vec<Warning>,
    /// The scenarios' on-CPU profiles (`[run] profile`), in plan order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<crate::ProfileRecord>,
    /// Bytes per idle connection of each target and idle workload
    /// (`idle_connections`), fitted over the sweep's trials.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_per_connection: Vec<crate::MemoryPerConnection>,
    /// How much the machine's own speed varied over the run, from the
    /// probe run before each trial; absent when no trial carries one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineVariation>,
}

/// One metric of one scenario key in a comparison of two runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    pub key: String,
    pub a: Option<MetricSummary>,
    pub b: Option<MetricSummary>,
    /// `None` when either side has no value.
    pub comparison: Option<MetricComparison>,
}

/// benchstat's geomean row: geometric means of the centers and of the
/// per-row ratios. A figure is `None` where a value ≤ 0 leaves it undefined.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Geomean {
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// Geometric mean of the per-row ratios b/a (not the ratio of the
    /// geomeans); 0/0 counts as 1.
    pub ratio: Option<f64>,
    /// The ratio as benchstat prints it, e.g. `-6.84%`.
    pub delta_text: Option<String>,
    /// Why a figure is missing.
    pub notes: Vec<String>,
}

/// One metric across the matched scenarios of two runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareTable {
    pub metric: Metric,
    pub rows: Vec<CompareRow>,
    /// Present when the table has more than one row, as in benchstat.
    pub geomean: Option<Geomean>,
}

/// One side of a comparison of two runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareSide {
    pub run: RunRecord,
    pub trials_per_scenario: u32,
}

/// Two runs compared scenario by scenario: what `corobench compare` renders.
/// Run A is the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunComparison {
    pub schema_version: u32,
    /// Always `run_comparison`.
    pub kind: String,
    pub a: CompareSide,
    pub b: CompareSide,
    pub settings: AnalysisSettings,
    pub metrics: Vec<MetricInfo>,
    pub tables: Vec<CompareTable>,
    /// Scenario keys only run A measured.
    pub only_in_a: Vec<String>,
    /// Scenario keys only run B measured.
    pub only_in_b: Vec<String>,
    pub warnings: Vec<Warning>,
    /// The regression gate's verdicts, when `--fail-on` asked for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Gate>,
}

impl RunComparison {
    /// Keeps the tables of `metrics` only, and the warnings about them or
    /// about the scenarios as a whole; the gate is kept as judged.
    pub fn keep_metrics(&mut self, metrics: &[Metric]) {
        self.tables.retain(|t| metrics.contains(&t.metric));
        self.metrics.retain(|m| metrics.contains(&m.id));
        self.warnings
            .retain(|w| w.metrics.is_empty() || w.metrics.iter().any(|m| metrics.contains(m)));
    }
}

/// One threshold of a regression gate: `rps:-5%` fails when req/s drops by
/// more than 5 %, `p99:+10%` when p99 rises by more than 10 %.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateRule {
    pub metric: Metric,
    /// The change of B/A beyond which B is worse, as a signed fraction:
    /// −0.05 fails below 0.95 × A, +0.10 above 1.10 × A.
    pub threshold: f64,
    /// The rule as written, e.g. `rps:-5%`.
    pub text: String,
}

impl GateRule {
    /// The ratio B/A at the threshold: 0.95 for −5 %.
    #[must_use]
    pub fn limit_ratio(&self) -> f64 {
        1.0 + self.threshold
    }

    /// Whether the bad direction is a drop (a negative threshold).
    #[must_use]
    pub fn fails_on_drop(&self) -> bool {
        self.threshold.is_sign_negative()
    }
}

/// How one gated metric of one scenario came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateOutcome {
    /// Within the threshold, or not significantly beyond it.
    Passed,
    /// Significantly worse beyond the threshold.
    Failed,
    /// The data cannot judge it (too few trials for an interval, a zero
    /// value): it neither passes nor fails the gate.
    Undecided,
}

/// One gated metric of one scenario present in both runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateCheck {
    /// The scenario key.
    pub scenario: String,
    pub metric: Metric,
    /// The rule as written, e.g. `rps:-5%`.
    pub rule: String,
    pub a_median: f64,
    pub b_median: f64,
    /// Hodges–Lehmann ratio B/A of the trial values with its Moses interval.
    pub ratio: Option<f64>,
    pub ratio_lo: Option<f64>,
    pub ratio_hi: Option<f64>,
    /// The ratio as a change with its interval: `-10.31% [-12.05%, -8.40%]`;
    /// empty without a ratio.
    pub change_text: String,
    /// Two-sided Mann–Whitney U test on the trial values.
    pub p_value: Option<f64>,
    pub outcome: GateOutcome,
    /// Why it passed, failed or could not be judged, in words.
    pub reason: String,
}

/// A regression gate over a comparison: every rule checked on every
/// scenario both runs measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    pub rules: Vec<GateRule>,
    /// Scenario by scenario, in run A's order, rules in the order given.
    pub checks: Vec<GateCheck>,
    /// Scenarios both runs measured.
    pub scenarios: usize,
    /// Significance level a failure must reach.
    pub alpha: f64,
    /// Confidence of the ratio intervals.
    pub confidence: f64,
}

impl Gate {
    /// The checks that failed.
    pub fn failures(&self) -> impl Iterator<Item = &GateCheck> {
        self.checks
            .iter()
            .filter(|c| c.outcome == GateOutcome::Failed)
    }

    /// The checks that were judged, passed or failed.
    #[must_use]
    pub fn judged(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| c.outcome != GateOutcome::Undecided)
            .count()
    }

    /// No check failed and at least one was judged: a gate that could
    /// judge nothing has passed nothing.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.judged() > 0 && self.failures().next().is_none()
    }

    /// The rules that matched no metric of any scenario both runs measured.
    pub fn unmatched_rules(&self) -> impl Iterator<Item = &GateRule> {
        self.rules
            .iter()
            .filter(|rule| !self.checks.iter().any(|c| c.rule == rule.text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_ids_match_their_serde_names() {
        for metric in Metric::ALL {
            let json = serde_json::to_string(&metric).unwrap();
            assert_eq!(json, format!("\"{}\"", metric.id()));
            assert_eq!(Metric::from_id(metric.id()), Some(metric));
        }
        assert_eq!(Metric::from_id("nope"), None);
        let bytes = Metric::Program(ProgramUnit::new("B/op"));
        assert_eq!(bytes.id(), "program:B/op");
        assert_eq!(Metric::from_id("program:B/op"), Some(bytes));
        assert_eq!(serde_json::to_string(&bytes).unwrap(), "\"program:B/op\"");
        assert_eq!(Metric::from_id("program:"), None);
    }

    #[test]
    fn claims_and_gates_name_the_costs_per_request_by_their_word() {
        use crate::counters::{Cost, PerRequest};
        assert_eq!(
            Metric::from_word("syscalls"),
            Some(Metric::PerRequest(PerRequest::server(Cost::Syscalls)))
        );
        assert_eq!(
            Metric::from_word("gen_ctx_switches"),
            Some(Metric::PerRequest(PerRequest::generator(
                Cost::ContextSwitches
            )))
        );
        assert!(Metric::words().contains(&"sys_us"));
        assert_eq!(
            Metric::from_id("server_sys_us_per_req").map(Metric::label),
            Some("sys µs/req")
        );
    }

    #[test]
    fn a_metric_is_named_by_its_word_or_by_the_label_tables_print() {
        assert_eq!(Metric::from_name("rps"), Some(Metric::RequestsPerS));
        assert_eq!(Metric::from_name("req/s"), Some(Metric::RequestsPerS));
        assert_eq!(Metric::from_name("cpu"), Some(Metric::ServerCpuPct));
        assert_eq!(Metric::from_name("CPU"), Some(Metric::ServerCpuPct));
        assert_eq!(Metric::from_name("p99.9"), Some(Metric::LatencyP999Us));
        assert_eq!(
            Metric::from_name("program:B/op"),
            Some(Metric::Program(ProgramUnit::new("B/op")))
        );
        assert_eq!(Metric::from_name("program:"), None);
        assert_eq!(Metric::from_name("speed"), None);
    }

    #[test]
    fn program_units_are_interned_and_judged_by_their_name() {
        assert_eq!(ProgramUnit::new("req/s"), ProgramUnit::new("req/s"));
        assert_eq!(ProgramUnit::new("req/s").better(), Better::Higher);
        assert_eq!(ProgramUnit::new("tasks/s").better(), Better::Higher);
        assert_eq!(ProgramUnit::new("p99-ms").better(), Better::Lower);
        assert_eq!(ProgramUnit::new("B/op").better(), Better::Lower);
    }

    #[test]
    fn only_throughput_and_connection_reuse_are_better_higher() {
        let higher: Vec<Metric> = Metric::ALL
            .into_iter()
            .filter(|m| m.better() == Better::Higher)
            .collect();
        assert_eq!(
            higher,
            vec![Metric::RequestsPerS, Metric::Pool(PoolFigure::Reuse)]
        );
    }

    #[test]
    fn metric_maps_serialise_with_ids_as_keys() {
        let values = BTreeMap::from([(Metric::ErrorRate, 0.5), (Metric::RequestsPerS, 10.0)]);
        let json = serde_json::to_string(&values).unwrap();
        assert_eq!(json, r#"{"requests_per_s":10.0,"error_rate":0.5}"#);
    }
}
