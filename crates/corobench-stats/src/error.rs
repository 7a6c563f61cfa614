//! The one error type of the crate. Every variant names the input at fault and
//! says how to fix it, so callers can show the message as it is.

use thiserror::Error;

/// Why a statistic could not be computed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    /// A sample has no values.
    #[error("the {what} sample is empty: at least one measured value is needed")]
    EmptySample {
        /// Which input: "sample", "old", "new", "rows".
        what: &'static str,
    },

    /// A sample holds NaN or an infinity, which has no rank and no median.
    #[error(
        "value #{index} of the {what} sample is {value}: statistics need finite numbers, \
         drop or re-measure that trial"
    )]
    NonFinite {
        /// Which input the value belongs to.
        what: &'static str,
        /// Zero-based position in the caller's slice.
        index: usize,
        /// The offending value.
        value: f64,
    },

    /// A quantile level outside the range the function accepts.
    #[error("quantile {q} is out of range: use a value in {range}")]
    QuantileOutOfRange {
        /// The requested level.
        q: f64,
        /// The accepted range, e.g. "[0, 1]".
        range: &'static str,
    },

    /// A confidence level that is not in (0, 1].
    #[error("confidence level {confidence} is out of range: use a value in (0, 1], e.g. 0.95")]
    ConfidenceOutOfRange {
        /// The requested level.
        confidence: f64,
    },

    /// A significance level that is not in (0, 1).
    #[error("alpha {alpha} is out of range: use a value in (0, 1), e.g. 0.05")]
    AlphaOutOfRange {
        /// The requested level.
        alpha: f64,
    },

    /// Every value of both samples is the same number: a rank test cannot
    /// tell the samples apart. benchstat reports this as p = 1 with a warning.
    #[error(
        "all {count} values of both samples equal {value}: the U test cannot tell them apart; \
         report p = 1 and warn"
    )]
    AllValuesEqual {
        /// The one value every measurement has.
        value: f64,
        /// How many values the two samples hold together.
        count: usize,
    },

    /// A value that must be positive (a geometric mean input) is not.
    #[error("value #{index} of the {what} is {value}: a geometric mean needs values > 0")]
    NonPositive {
        /// Which input the value belongs to.
        what: &'static str,
        /// Zero-based position in the caller's slice.
        index: usize,
        /// The offending value.
        value: f64,
    },

    /// A bootstrap asked for too few resamples to estimate any interval.
    #[error("{resamples} bootstrap resamples are too few: use at least {minimum}, e.g. 10000")]
    TooFewResamples {
        /// The requested count.
        resamples: usize,
        /// The least count accepted.
        minimum: usize,
    },

    /// A value outside the range a model accepts (a concurrency below 1, a
    /// negative throughput, a rate ≤ 0).
    #[error("{what} #{index} is {value}: {expected}")]
    ValueOutOfRange {
        /// Which input and field, e.g. "concurrency of point".
        what: &'static str,
        /// Zero-based position in the caller's slice.
        index: usize,
        /// The offending value.
        value: f64,
        /// What the value must be, and why.
        expected: &'static str,
    },

    /// A setting (not a measured value) outside its accepted range.
    #[error("{name} {value} is out of range: use a value in {range}")]
    ParameterOutOfRange {
        /// The setting, e.g. "pass level".
        name: &'static str,
        /// The requested value.
        value: f64,
        /// The accepted range, e.g. "(0, 1)".
        range: &'static str,
    },

    /// The input has too few distinct values of a variable to fit a model.
    #[error("{what}: found {found}, need at least {needed}; {why}")]
    TooFewDistinct {
        /// What was counted, e.g. "distinct concurrencies in the USL points".
        what: &'static str,
        /// How many distinct values the input has.
        found: usize,
        /// How many the model needs.
        needed: usize,
        /// Why, and what to measure.
        why: &'static str,
    },

    /// The data hold no information the model can fit (every throughput is 0).
    #[error("the {model} cannot be fitted: {reason}")]
    DegenerateFit {
        /// The model, e.g. "USL".
        model: &'static str,
        /// What about the data makes the fit meaningless.
        reason: &'static str,
    },

    /// An iterative fit stopped before it converged.
    #[error("the {model} fit did not converge in {iterations} iterations: {hint}")]
    NoConvergence {
        /// The model, e.g. "USL".
        model: &'static str,
        /// How many iterations were run.
        iterations: usize,
        /// The likely cause and what to measure.
        hint: &'static str,
    },

    /// Too few of a bootstrap's resamples could be fitted to read an interval off them.
    #[error(
        "only {fitted} of {resamples} bootstrap resamples could be fitted: too few for an \
         interval; measure more points"
    )]
    TooFewFittedResamples {
        /// Resamples that gave a fit.
        fitted: usize,
        /// Resamples drawn.
        resamples: usize,
    },

    /// Two samples too small for a bounded interval at the requested confidence.
    #[error(
        "{n_a} and {n_b} values cannot bound a {confidence} confidence interval of the ratio: \
         {}",
        min_each.map_or_else(
            || "no sample size reaches that confidence".to_string(),
            |n| format!("measure at least {n} values in each sample"),
        )
    )]
    TooFewForInterval {
        /// Size of the first sample.
        n_a: usize,
        /// Size of the second sample.
        n_b: usize,
        /// The requested confidence.
        confidence: f64,
        /// The least equal size that reaches the confidence, if any does.
        min_each: Option<usize>,
    },
}
