//! One-sample summaries: extremes, means and quantiles.
//!
//! Every function takes the sample in any order, rejects an empty or
//! non-finite sample with [`StatsError`], and never modifies its input.

use crate::StatsError;
use crate::sample::{check_finite, check_positive, sorted_copy};

/// The smallest value of a non-empty, finite sample.
pub fn min(values: &[f64]) -> Result<f64, StatsError> {
    check_finite("sample", values)?;
    Ok(values.iter().copied().fold(f64::INFINITY, f64::min))
}

/// The largest value of a non-empty, finite sample.
pub fn max(values: &[f64]) -> Result<f64, StatsError> {
    check_finite("sample", values)?;
    Ok(values.iter().copied().fold(f64::NEG_INFINITY, f64::max))
}

/// The arithmetic mean of a non-empty, finite sample.
pub fn mean(values: &[f64]) -> Result<f64, StatsError> {
    check_finite("sample", values)?;
    Ok(values.iter().sum::<f64>() / values.len() as f64)
}

/// The geometric mean, exp(mean(ln x)), of a non-empty sample of positive,
/// finite values; a value ≤ 0 is a [`StatsError::NonPositive`].
pub fn geometric_mean(values: &[f64]) -> Result<f64, StatsError> {
    check_positive("sample", values)?;
    let mean_ln = values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64;
    Ok(mean_ln.exp())
}

/// The q-quantile (q in [0, 1]) with Hyndman–Fan definition 8, the one
/// go-moremath's `Sample.Quantile` and numpy's `method="median_unbiased"` use:
/// position h = 1/3 + q·(n + 1/3) in 1-based order statistics, linear
/// interpolation between the two neighbours, clamped to the sample's extremes.
/// q = 0 gives the minimum, q = 1 the maximum.
pub fn quantile(values: &[f64], q: f64) -> Result<f64, StatsError> {
    if !(0.0..=1.0).contains(&q) {
        return Err(StatsError::QuantileOutOfRange { q, range: "[0, 1]" });
    }
    let sorted = sorted_copy("sample", values)?;
    Ok(quantile_of_sorted(&sorted, q))
}

/// The median, i.e. [`quantile`] at 0.5: the middle value, or the mean of the
/// two middle values for an even count.
pub fn median(values: &[f64]) -> Result<f64, StatsError> {
    quantile(values, 0.5)
}

/// R8 quantile of an already sorted, non-empty sample without NaN; q in [0, 1].
/// Bootstrap estimates may be ±∞ (a resample without a finite answer): next to
/// an infinite neighbour the result is that neighbour, never ∞ − ∞ = NaN.
pub(crate) fn quantile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let position = 1.0 / 3.0 + q * (n as f64 + 1.0 / 3.0);
    let below = position.floor();
    let fraction = position - below;
    // `below` is a 1-based order index; it may fall outside 1..n at the ends.
    let below = below as usize;
    if below == 0 {
        return sorted[0];
    }
    if below >= n {
        return sorted[n - 1];
    }
    let (low, high) = (sorted[below - 1], sorted[below]);
    if fraction == 0.0 || low == high || low.is_infinite() {
        low
    } else if high.is_infinite() {
        high
    } else {
        low + fraction * (high - low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extremes_and_means() {
        let xs = [4.0, 1.0, 2.0, 8.0];
        assert_eq!(min(&xs), Ok(1.0));
        assert_eq!(max(&xs), Ok(8.0));
        assert_eq!(mean(&xs), Ok(3.75));
        let gm = geometric_mean(&xs).unwrap();
        assert!((gm - 64f64.powf(0.25)).abs() < 1e-12);
    }

    #[test]
    fn geometric_mean_rejects_non_positive_values() {
        assert_eq!(
            geometric_mean(&[1.0, 0.0]),
            Err(StatsError::NonPositive {
                what: "sample",
                index: 1,
                value: 0.0
            })
        );
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Ok(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Ok(2.5));
        assert_eq!(median(&[7.0]), Ok(7.0));
    }

    #[test]
    fn r8_interpolates_between_order_statistics() {
        // n = 4, q = 0.25: h = 1/3 + 0.25 * 13/3 = 1.41666…, so x1 + 0.41666…·(x2 − x1).
        let q = quantile(&[10.0, 20.0, 30.0, 40.0], 0.25).unwrap();
        assert!((q - (10.0 + 10.0 * (1.0 / 3.0 + 0.25 * 13.0 / 3.0 - 1.0))).abs() < 1e-12);
        assert_eq!(quantile(&[10.0, 20.0], 0.0), Ok(10.0));
        assert_eq!(quantile(&[10.0, 20.0], 1.0), Ok(20.0));
        assert_eq!(quantile(&[10.0, 20.0], 0.01), Ok(10.0));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            quantile(&[1.0], 1.5),
            Err(StatsError::QuantileOutOfRange { .. })
        ));
        assert!(matches!(
            quantile(&[1.0], f64::NAN),
            Err(StatsError::QuantileOutOfRange { .. })
        ));
        assert_eq!(median(&[]), Err(StatsError::EmptySample { what: "sample" }));
        assert!(mean(&[1.0, f64::NAN]).is_err());
    }
}
