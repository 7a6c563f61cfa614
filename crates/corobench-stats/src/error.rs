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

    /// A value of a sample whose ratio to another is asked is not positive:
    /// the ratio compares logarithms.
    #[error(
        "value #{index} of the {what} sample is {value}: a ratio of two samples needs values > 0"
    )]
    NotPositive {
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
}
