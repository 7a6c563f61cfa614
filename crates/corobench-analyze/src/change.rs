//! The one estimate of how much a metric changed between two samples of
//! trials, shared by every comparison (within a run, between runs), the
//! regression gate and every output format: the Hodges–Lehmann ratio
//! new/old with Moses's interval, the interval that inverts the very U test
//! whose p-value is printed beside it (docs/methodology.md, "One change,
//! one estimate").
//!
//! Values at or below zero have no logarithm (an error rate of 0): there the
//! change is the ratio of the medians, without an interval.

use corobench_stats::{StatsError, format_signed_pct, hodges_lehmann_ratio, ratio_ci};

/// How a [`Change`] was estimated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Estimator {
    /// The Hodges–Lehmann ratio of the trial values.
    HodgesLehmann,
    /// Medians' ratio: a value ≤ 0 leaves no logarithm to take.
    MedianRatio,
}

/// new/old as one estimate with its interval, when one exists.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Change {
    /// `None` when old is 0 and new is not: no finite ratio exists.
    pub(crate) ratio: Option<f64>,
    /// Moses's interval; `None` for too few trials or a median ratio.
    pub(crate) interval: Option<(f64, f64)>,
    /// The confidence the interval achieves (≥ the requested one).
    pub(crate) confidence: Option<f64>,
    pub(crate) estimator: Estimator,
}

impl Change {
    /// The change of `new` against `old` (trial values, both non-empty and
    /// finite), whose medians are `medians`.
    pub(crate) fn of(old: &[f64], new: &[f64], medians: (f64, f64), confidence: f64) -> Self {
        match ratio_ci(new, old, confidence) {
            Ok(ci) => Self {
                ratio: Some(ci.estimate),
                interval: Some((ci.lo, ci.hi)),
                confidence: Some(ci.confidence),
                estimator: Estimator::HodgesLehmann,
            },
            // Too few trials for an interval still have a point estimate.
            Err(StatsError::TooFewForInterval { .. }) => Self {
                ratio: hodges_lehmann_ratio(new, old).ok(),
                interval: None,
                confidence: None,
                estimator: Estimator::HodgesLehmann,
            },
            Err(_) => Self {
                ratio: corobench_stats::relative_delta(medians.0, medians.1).map(|d| d + 1.0),
                interval: None,
                confidence: None,
                estimator: Estimator::MedianRatio,
            },
        }
    }

    /// `-10.31% [-12.05%, -8.40%]`, `-10.31%` without an interval, `?`
    /// without a ratio.
    pub(crate) fn text(&self) -> String {
        let Some(ratio) = self.ratio else {
            return "?".to_owned();
        };
        let point = format_signed_pct(ratio - 1.0);
        match self.interval {
            Some((lo, hi)) => format!(
                "{point} [{}, {}]",
                format_signed_pct(lo - 1.0),
                format_signed_pct(hi - 1.0)
            ),
            None => point,
        }
    }

    /// The delta cell: `~` when p > alpha (p = alpha counts as
    /// significant), `0.00%` for equal medians of a median ratio, else
    /// [`Change::text`].
    pub(crate) fn cell(&self, p: f64, alpha: f64) -> String {
        if p > alpha {
            "~".to_owned()
        } else if self.estimator == Estimator::MedianRatio && self.ratio == Some(1.0) {
            "0.00%".to_owned()
        } else {
            self.text()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trials_apart_by_a_factor_change_by_that_factor_with_an_interval() {
        let old = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0];
        let new: Vec<f64> = old.iter().map(|v| v * 0.9).collect();
        let change = Change::of(&old, &new, (102.5, 92.25), 0.95);
        assert_eq!(change.estimator, Estimator::HodgesLehmann);
        assert!((change.ratio.unwrap() - 0.9).abs() < 1e-12);
        let (lo, hi) = change.interval.unwrap();
        assert!(lo < 0.9 && 0.9 < hi, "{lo} {hi}");
        assert!(change.text().starts_with("-10.00% ["), "{}", change.text());
        assert_eq!(change.cell(0.5, 0.05), "~");
    }

    #[test]
    fn too_few_trials_keep_the_estimate_without_an_interval() {
        let change = Change::of(&[10.0, 11.0, 12.0], &[20.0, 22.0, 24.0], (11.0, 22.0), 0.95);
        assert!((change.ratio.unwrap() - 2.0).abs() < 0.1);
        assert_eq!(change.interval, None);
        assert!(!change.text().contains('['));
    }

    #[test]
    fn zeros_fall_back_to_the_ratio_of_medians() {
        let zero = [0.0; 6];
        let change = Change::of(&zero, &zero, (0.0, 0.0), 0.95);
        assert_eq!(change.estimator, Estimator::MedianRatio);
        assert_eq!(change.cell(0.01, 0.05), "0.00%");
        let some = [0.0, 0.0, 0.0, 0.01, 0.01, 0.01];
        let change = Change::of(&zero, &some, (0.0, 0.005), 0.95);
        assert_eq!((change.ratio, change.text().as_str()), (None, "?"));
    }
}
