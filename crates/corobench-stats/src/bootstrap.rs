//! A seeded percentile-bootstrap confidence interval for the median, in the
//! style of criterion: resample with replacement, take each resample's median,
//! read the interval off the medians' quantiles.
//!
//! This complements the order-statistic interval of [`crate::median_ci`]: it
//! is never infinite, but for small samples it is too narrow (it cannot see
//! beyond the observed values), so benchstat-style reports use the
//! order-statistic interval and this one is an extra.

use crate::StatsError;
use crate::random::SplitMix64;
use crate::sample::{check_confidence, sorted_copy};
use crate::summary::quantile_of_sorted;

/// The least number of resamples [`bootstrap_median_ci`] accepts.
pub const MIN_RESAMPLES: usize = 100;

/// A percentile-bootstrap interval for a statistic (the median, or a ratio of
/// medians in [`crate::bootstrap_ratio_of_medians_ci`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootstrapCi {
    /// The statistic on the sample(s) as measured.
    pub estimate: f64,
    /// The (1 − confidence)/2 quantile of the resampled statistics.
    pub lo: f64,
    /// The (1 + confidence)/2 quantile of the resampled statistics.
    pub hi: f64,
    /// The requested confidence (a bootstrap has no exact achieved level).
    pub confidence: f64,
    /// How many resamples were drawn.
    pub resamples: usize,
}

/// Percentile-bootstrap interval for the median of `values` at `confidence` in
/// (0, 1), from `resamples` (≥ [`MIN_RESAMPLES`]) resamples drawn with a
/// generator seeded by `seed`: the same inputs always give the same interval.
pub fn bootstrap_median_ci(
    values: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Result<BootstrapCi, StatsError> {
    let sorted = sorted_copy("sample", values)?;
    check_confidence(confidence)?;
    check_resamples(resamples)?;
    let mut rng = SplitMix64::new(seed);
    let mut resample = vec![0.0; sorted.len()];
    let mut medians = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        medians.push(resampled_median(&mut rng, &sorted, &mut resample));
    }
    let interval = percentile_interval(medians, confidence);
    Ok(BootstrapCi {
        estimate: quantile_of_sorted(&sorted, 0.5),
        lo: interval.lo,
        hi: interval.hi,
        confidence,
        resamples,
    })
}

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

/// Fills `resample` with values drawn from `source` (non-empty) with replacement.
pub(crate) fn resample_into(rng: &mut SplitMix64, source: &[f64], resample: &mut [f64]) {
    for slot in resample.iter_mut() {
        *slot = source[rng.below(source.len())];
    }
}

/// The median of one resample of `source` drawn into the scratch buffer `resample`.
pub(crate) fn resampled_median(rng: &mut SplitMix64, source: &[f64], resample: &mut [f64]) -> f64 {
    resample_into(rng, source, resample);
    resample.sort_by(f64::total_cmp);
    quantile_of_sorted(resample, 0.5)
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

    fn sample() -> Vec<f64> {
        (0..25).map(|i| 100.0 + f64::from(i * 7 % 25)).collect()
    }

    #[test]
    fn same_seed_same_interval() {
        let a = bootstrap_median_ci(&sample(), 0.95, 2000, 7).unwrap();
        let b = bootstrap_median_ci(&sample(), 0.95, 2000, 7).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn interval_brackets_the_median_inside_the_sample_range() {
        let ci = bootstrap_median_ci(&sample(), 0.95, 2000, 1).unwrap();
        assert_eq!(ci.estimate, 112.0);
        assert!(100.0 <= ci.lo && ci.lo <= ci.estimate, "{ci:?}");
        assert!(ci.estimate <= ci.hi && ci.hi <= 124.0, "{ci:?}");
        assert!(ci.lo < ci.hi);
    }

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
            bootstrap_median_ci(&sample(), 0.95, 10, 0),
            Err(StatsError::TooFewResamples {
                resamples: 10,
                minimum: 100
            })
        );
    }
}
