//! Published claims a run puts to the test: as a spec states them, with
//! each side resolved to one scenario of the run (stored with the run, so a
//! report needs no catalog of targets), and the verdict the analysis
//! reaches on the run's trials.

use serde::{Deserialize, Serialize};

use crate::analysis::Metric;
use crate::schedule::ScenarioKey;

/// Which way a claim says a/b goes, when it gives no figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClaimDirection {
    #[serde(rename = "a>b")]
    AGreater,
    #[serde(rename = "a<b")]
    ALess,
    /// a is above zero and b is zero: "Swoole fails some requests, Go
    /// none" (error rates, counts of refusals).
    #[serde(rename = "a>0,b=0")]
    OnlyA,
}

impl ClaimDirection {
    /// As a spec writes it: `a>b`, `a<b`, `a>0,b=0`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AGreater => "a>b",
            Self::ALess => "a<b",
            Self::OnlyA => "a>0,b=0",
        }
    }

    /// The direction a spec's word names (spaces aside), if any.
    #[must_use]
    pub fn from_word(word: &str) -> Option<Self> {
        let word = word.replace(' ', "");
        [Self::AGreater, Self::ALess, Self::OnlyA]
            .into_iter()
            .find(|d| d.as_str() == word)
    }
}

/// What a claim asserts about a/b.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClaimExpectation {
    /// a/b is `ratio`; a measured ratio within `tolerance` of it (0.1: 10%
    /// either way, as a factor) agrees.
    Ratio { ratio: f64, tolerance: f64 },
    /// a is larger (or smaller) than b, by any amount.
    Direction { direction: ClaimDirection },
}

/// The scenario a side of a claim names, or why the run could not measure it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimScenario {
    /// The key of the one scenario of the run the selector matches.
    Scenario(ScenarioKey),
    /// The target cannot run on the machine that planned the run: the
    /// reason, with how to install what is missing where that is known.
    Unavailable(String),
}

/// One side of a claim: `a` or `b`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimSide {
    /// As the spec wrote it: `go-ants-tasks pool_size=200`.
    pub selector: String,
    pub target: String,
    pub resolved: ClaimScenario,
}

/// The figures a report published for a and b, shown beside ours.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublishedValues {
    pub a: f64,
    pub b: f64,
}

/// A published claim about two scenarios of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimRecord {
    /// Where it was published, and how it was measured there.
    pub source: String,
    /// The claim in a sentence.
    pub says: String,
    /// The workload both sides were measured with (server targets only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    pub metric: Metric,
    pub a: ClaimSide,
    pub b: ClaimSide,
    pub expectation: ClaimExpectation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<PublishedValues>,
}

/// What the run's trials say of a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimOutcome {
    /// The measured ratio agrees with the claim (within its tolerance).
    Consistent,
    /// The measured ratio is lower than the claim allows.
    RefutedLower,
    /// The measured ratio is higher than the claim allows.
    RefutedHigher,
    /// The trials cannot decide: too few, too noisy, or a bound figure.
    Inconclusive,
    /// A side could not be measured on this machine.
    NotMeasured,
}

impl ClaimOutcome {
    /// How reports name it.
    #[must_use]
    pub fn text(self) -> &'static str {
        match self {
            Self::Consistent => "consistent",
            Self::RefutedLower => "refuted (lower)",
            Self::RefutedHigher => "refuted (higher)",
            Self::Inconclusive => "inconclusive",
            Self::NotMeasured => "not measured here",
        }
    }
}

/// Our figure for one side of a claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimMeasurement {
    /// Index into the analysis' `scenarios`.
    pub scenario: usize,
    /// The median over the trials that measured the metric.
    pub median: f64,
    pub n: usize,
    /// Of those trials, how many the load generator limited: their figures
    /// bound the target's rather than measure it.
    pub generator_bound_trials: usize,
}

/// A ratio a/b with its confidence interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimRatio {
    pub estimate: f64,
    /// `None` when the trials are too few for an interval.
    pub lo: Option<f64>,
    /// `None` when the trials are too few for an interval.
    pub hi: Option<f64>,
    /// The confidence the interval achieves (the requested one without it).
    pub confidence: f64,
}

/// The ratios a claim allows: its figure, divided and multiplied by one
/// plus its tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimBand {
    pub lo: f64,
    pub hi: f64,
}

/// A claim and what the run says of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimVerdict {
    pub claim: ClaimRecord,
    pub a: Option<ClaimMeasurement>,
    pub b: Option<ClaimMeasurement>,
    /// The measured a/b (absent when a side has no figure).
    pub ratio: Option<ClaimRatio>,
    /// Ratio claims: the ratios that agree with the claim.
    pub band: Option<ClaimBand>,
    /// Direction claims: the two-sided Mann–Whitney U test of a against b.
    pub p_value: Option<f64>,
    pub outcome: ClaimOutcome,
    /// What was claimed, as reports show it: `3.06× ±10%`, `a>b`.
    pub claimed_text: String,
    /// The measured ratio: `1.69× [1.61, 1.77]`, `1.69× (no interval)`,
    /// `—` without one.
    pub ratio_text: String,
    /// [`ClaimOutcome::text`].
    pub verdict_text: String,
    /// Why, and what would decide it when nothing does.
    pub why: String,
}
