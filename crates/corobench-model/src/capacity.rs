//! Capacity: the highest open-loop rate a scenario serves within its
//! service level objectives. The search settings and objectives a run
//! stores, how one trial is judged against them, and what the analysis
//! says about each scenario's capacity.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::analysis::MetricSummary;
use crate::load::LoadReport;

/// What a service level objective bounds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SloMeasure {
    /// A latency percentile (0 < percentile ≤ 100), from the intended send
    /// times of the open loop, so a queue in front of the server counts.
    LatencyPercentile { percentile: f64 },
    /// The mean latency.
    LatencyMean,
    /// Failed requests over all requests (transport errors, HTTP ≥ 400,
    /// malformed responses).
    Errors,
}

/// One objective, e.g. `p99 <= 10ms` or `errors <= 0.1%`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    pub measure: SloMeasure,
    /// Microseconds for latency, a fraction (0.001 = 0.1%) for errors.
    pub limit: f64,
}

/// The objectives text could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SloParseError(pub String);

impl fmt::Display for SloParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SloParseError {}

const SLO_FORMS: &str = "write `p99 <= 10ms`, `p99.9 <= 50ms`, `p50 <= 2ms`, `mean <= 5ms` \
                         or `errors <= 0.1%` (latency in us, ms or s)";

impl FromStr for Slo {
    type Err = SloParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |why: &str| SloParseError(format!("`{text}`: {why}; {SLO_FORMS}"));
        let (name, limit) = text
            .split_once("<=")
            .ok_or_else(|| fail("no `<=` between the measure and its limit"))?;
        let (name, limit) = (name.trim().to_ascii_lowercase(), limit.trim());
        let measure = match name.as_str() {
            "errors" | "error_rate" => SloMeasure::Errors,
            "mean" => SloMeasure::LatencyMean,
            _ => {
                let digits = name
                    .strip_prefix('p')
                    .ok_or_else(|| fail(&format!("unknown measure `{name}`")))?;
                let percentile: f64 = digits
                    .parse()
                    .map_err(|_| fail(&format!("unknown measure `{name}`")))?;
                if !(percentile > 0.0 && percentile <= 100.0) {
                    return Err(fail("a percentile lies in (0, 100]"));
                }
                SloMeasure::LatencyPercentile { percentile }
            }
        };
        let limit = match measure {
            SloMeasure::Errors => parse_percent(limit).ok_or_else(|| {
                fail("an error budget is a percentage from 0% to 100%, e.g. 0.1%")
            })?,
            _ => parse_latency_us(limit).ok_or_else(|| {
                fail("a latency limit is a positive number with a unit, e.g. 10ms")
            })?,
        };
        Ok(Self { measure, limit })
    }
}

/// `0.1%` → 0.001.
fn parse_percent(text: &str) -> Option<f64> {
    let value: f64 = text.strip_suffix('%')?.trim().parse().ok()?;
    (0.0..=100.0).contains(&value).then_some(value / 100.0)
}

/// `10ms` → 10000 (µs); `250us`, `1.5s` too.
fn parse_latency_us(text: &str) -> Option<f64> {
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = text.strip_suffix("us").or_else(|| text.strip_suffix("µs")) {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1e6)
    } else {
        return None;
    };
    let value: f64 = number.trim().parse().ok()?;
    let us = value * scale;
    (us.is_finite() && us > 0.0 && us <= 3.6e9).then_some(us)
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.measure {
            SloMeasure::Errors => write!(f, "errors <= {}%", self.limit * 100.0),
            SloMeasure::LatencyMean => write!(f, "mean <= {}", latency_text(self.limit)),
            SloMeasure::LatencyPercentile { percentile } => {
                write!(f, "p{percentile} <= {}", latency_text(self.limit))
            }
        }
    }
}

fn latency_text(us: f64) -> String {
    if us >= 1e6 && (us / 1e6).fract() == 0.0 {
        format!("{}s", us / 1e6)
    } else if us >= 1e3 {
        format!("{}ms", us / 1e3)
    } else {
        format!("{us}us")
    }
}

impl Slo {
    /// The trial's value of the measure (µs or a fraction).
    #[must_use]
    pub fn observed(&self, load: &LoadReport) -> f64 {
        match self.measure {
            SloMeasure::Errors => load.error_rate,
            SloMeasure::LatencyMean => load.latency.summary.mean_us,
            SloMeasure::LatencyPercentile { percentile } => {
                // Every request missing a response breaks the objective: an
                // empty histogram says nothing good about the latency.
                if load.latency.histogram.count() == 0 {
                    f64::INFINITY
                } else {
                    load.latency.histogram.value_at_percentile_us(percentile) as f64
                }
            }
        }
    }

    /// Whether a trial met this objective.
    #[must_use]
    pub fn met_by(&self, load: &LoadReport) -> bool {
        self.observed(load) <= self.limit
    }

    /// Whether a trial met this objective counting latency from each
    /// request's actual send, as the server saw it (the uncorrected
    /// histogram of an open loop; a closed loop has only that one): the
    /// time a request waited to leave is left out.
    #[must_use]
    pub fn met_from_send(&self, load: &LoadReport) -> bool {
        let Some(sent) = load.latency_uncorrected.as_ref() else {
            return self.met_by(load);
        };
        let observed = match self.measure {
            SloMeasure::Errors => load.error_rate,
            SloMeasure::LatencyMean => sent.summary.mean_us,
            SloMeasure::LatencyPercentile { percentile } if sent.histogram.count() > 0 => {
                sent.histogram.value_at_percentile_us(percentile) as f64
            }
            SloMeasure::LatencyPercentile { .. } => f64::INFINITY,
        };
        observed <= self.limit
    }
}

/// `[capacity]` of a spec: the objectives and how the search walks rates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacitySettings {
    /// Every one must hold for a trial to pass.
    pub slos: Vec<Slo>,
    /// The first rate tried, req/s.
    pub start_rate: f64,
    /// While every rate passes, the next is this many times the highest.
    pub growth: f64,
    /// No rate above this is tried.
    pub max_rate: f64,
    /// When the first rate fails, lower rates are tried down to this one.
    pub min_rate: f64,
    /// Trials at each rate; the rate passes when most of them pass.
    pub trials_per_rate: u32,
    /// The search stops narrowing when the lowest failing rate is within
    /// this fraction above the highest passing one.
    pub precision: f64,
    /// The most rates tried per scenario.
    pub max_rates: u32,
}

/// How one rate of a scenario went, from all its trials.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateVerdict {
    /// Most trials met every objective.
    Pass,
    /// Most trials broke an objective.
    Fail,
    /// The generator could not offer the rate (it ran out of CPU): the
    /// server was not tested there.
    GeneratorLimit,
    /// Not enough trials yet, or too many failed to start.
    Undecided,
}

/// A capacity estimate, or why the trials give none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CapacityEstimate {
    /// The rate where a trial passes half the time, from a non-increasing
    /// step fit of the pass fraction against the rate, with a bootstrap
    /// interval.
    Estimated {
        estimate: f64,
        lo: f64,
        /// ∞ where resamples left the rates tried; `null` in JSON.
        #[serde(with = "unbounded_above")]
        hi: f64,
        confidence: f64,
        /// The rates tried just below and just above the estimate.
        between: [f64; 2],
        /// Pass fractions never rise with the rate.
        monotone: bool,
    },
    /// Every trial passed up to `rate`; `generator_limit` says the search
    /// stopped because the generator could go no higher.
    AtLeast { rate: f64, generator_limit: bool },
    /// Every trial failed, down to `rate`.
    Below { rate: f64 },
    /// Passes and failures at one rate only.
    SingleRate { rate: f64 },
    /// Failures that do not grow with the rate: not a capacity limit.
    NotDecreasing,
    /// No trial measured anything.
    NoTrials,
}

/// One rate tried for a scenario, with its latency curve point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacityRate {
    pub rate: f64,
    /// The scenario (one per rate) that holds these trials.
    pub scenario_index: u32,
    pub passed: u32,
    pub failed: u32,
    /// Trials the generator could not drive at this rate.
    pub generator_limited: u32,
    /// Trials that measured nothing (the target crashed, ...).
    pub broken: u32,
    pub verdict: RateVerdict,
    /// Latency at this rate across its trials, with intervals (µs).
    pub p50_us: Option<MetricSummary>,
    pub p99_us: Option<MetricSummary>,
    pub p999_us: Option<MetricSummary>,
    /// Requests actually sent a second (median over trials).
    pub achieved_rate: Option<f64>,
}

/// The capacity of one scenario (target × parameters × workload ×
/// connections), over the rates its search tried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioCapacity {
    /// The scenario key without its rate, e.g. `go-nethttp/json/c=256`.
    pub key: String,
    pub target: String,
    /// Ascending.
    pub rates: Vec<CapacityRate>,
    pub estimate: CapacityEstimate,
    /// The lowest rate the generator could not drive, if the search met
    /// one: the server was not tested at or above it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_limit: Option<f64>,
}

/// Capacity of two scenarios compared: b / a.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacityComparison {
    pub a: String,
    pub b: String,
    pub ratio: f64,
    pub lo: f64,
    /// ∞ where the interval is open above; `null` in JSON.
    #[serde(with = "unbounded_above")]
    pub hi: f64,
    pub confidence: f64,
    /// Two-sided bootstrap p-value of "the capacities are equal".
    pub p_value: f64,
    /// p ≤ α and the interval excludes 1.
    pub significant: bool,
}

/// Everything a capacity run says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacityAnalysis {
    pub settings: CapacitySettings,
    pub scenarios: Vec<ScenarioCapacity>,
    /// Each scenario with a capacity against the baseline target's scenario
    /// of the same workload.
    pub comparisons: Vec<CapacityComparison>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_open_above_survives_json() {
        let estimate = CapacityEstimate::Estimated {
            estimate: 1000.0,
            lo: 900.0,
            hi: f64::INFINITY,
            confidence: 0.95,
            between: [990.0, 1010.0],
            monotone: true,
        };
        let json = serde_json::to_string(&estimate).unwrap();
        assert!(json.contains("\"hi\":null"), "{json}");
        let back: CapacityEstimate = serde_json::from_str(&json).unwrap();
        assert_eq!(back, estimate);
    }

    #[test]
    fn reads_the_objectives_people_write() {
        let p99: Slo = "p99 <= 10ms".parse().unwrap();
        assert_eq!(
            p99.measure,
            SloMeasure::LatencyPercentile { percentile: 99.0 }
        );
        assert!((p99.limit - 10_000.0).abs() < 1e-9);
        let deep: Slo = "P99.9<=250us".parse().unwrap();
        assert_eq!(
            deep.measure,
            SloMeasure::LatencyPercentile { percentile: 99.9 }
        );
        assert!((deep.limit - 250.0).abs() < 1e-9);
        let errors: Slo = "errors <= 0.1%".parse().unwrap();
        assert_eq!(errors.measure, SloMeasure::Errors);
        assert!((errors.limit - 0.001).abs() < 1e-12);
        assert_eq!(p99.to_string(), "p99 <= 10ms");
        assert_eq!(errors.to_string(), "errors <= 0.1%");
    }

    #[test]
    fn refuses_what_it_cannot_read_and_says_how() {
        for bad in [
            "p99 < 10ms",
            "p99 <= 10",
            "p0 <= 1ms",
            "p101 <= 1ms",
            "latency <= 1ms",
            "errors <= 0.1",
            "errors <= 200%",
            "p99 <= -1ms",
            "p99 <= nanms",
        ] {
            let error = bad.parse::<Slo>().unwrap_err().to_string();
            assert!(error.contains(bad), "{error}");
            assert!(error.contains("p99 <= 10ms"), "{error}");
        }
    }
}

/// An upper end that may be ∞: JSON has no infinity, so it is written as
/// `null` and read back as ∞ (serde_json would write `null` and then refuse
/// to read it as a number).
mod unbounded_above {
    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's `with` passes a reference
    pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        if value.is_finite() {
            serializer.serialize_f64(*value)
        } else {
            serializer.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::INFINITY))
    }
}
