//! The pieces of a seeded percentile bootstrap that the USL and capacity
//! fits share: resampling with replacement, and reading an interval off the
//! resampled estimates' quantiles.
//!
//! Medians and ratios of medians are not bootstrapped: for the few trials a
//! scenario has, a bootstrap cannot see beyond the observed values and its
//! level is only approximate, so they use the exact order-statistic and
//! Moses intervals (docs/methodology.md gives the coverage figures).

use crate::StatsError;
use crate::summary::quantile_of_sorted;

/// The least number of resamples a bootstrap accepts.
pub const MIN_RESAMPLES: usize = 100;

/// A two-sided interval; either end may be infinite where the data cannot bound it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

impl Interval {
    /// True when `value` lies in \[lo, hi\].
    pub fn contains(&self, value: f64) -> bool {
        self.lo <= value && value <= self.hi
    }
}

/// Rejects a resample count below [`MIN_RESAMPLES`].
pub(crate) fn check_resamples(resamples: usize) -> Result<(), StatsError> {
    if resamples < MIN_RESAMPLES {
        return Err(StatsError::TooFewResamples {
            resamples,
            minimum: MIN_RESAMPLES,
        });
    }
    Ok(())
}

/// The percentile interval of bootstrap estimates (non-empty, no NaN, ±∞
/// allowed): their (1 − confidence)/2 and (1 + confidence)/2 R8 quantiles.
pub(crate) fn percentile_interval(mut estimates: Vec<f64>, confidence: f64) -> Interval {
    estimates.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    Interval {
        lo: quantile_of_sorted(&estimates, tail),
        hi: quantile_of_sorted(&estimates, 1.0 - tail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;

    #[test]
    fn resample_indexes_cover_every_slot() {
        let mut rng = SplitMix64::new(3);
        let mut seen = [0usize; 7];
        for _ in 0..7000 {
            seen[rng.below(7)] += 1;
        }
        assert!(seen.iter().all(|&count| count > 700), "{seen:?}");
    }

    #[test]
    fn too_few_resamples_is_an_error() {
        assert_eq!(
            check_resamples(10),
            Err(StatsError::TooFewResamples {
                resamples: 10,
                minimum: 100
            })
        );
        assert_eq!(check_resamples(MIN_RESAMPLES), Ok(()));
    }

    #[test]
    fn the_percentile_interval_reads_the_tails() {
        let estimates: Vec<f64> = (0..=100).map(f64::from).collect();
        let interval = percentile_interval(estimates, 0.9);
        // R8 quantiles of 0..=100 at 5% and 95%: 4.4 and 95.6.
        assert!((interval.lo - 4.4).abs() < 1e-9, "{interval:?}");
        assert!((interval.hi - 95.6).abs() < 1e-9, "{interval:?}");
        assert!(interval.contains(50.0) && !interval.contains(96.0));
    }
}
