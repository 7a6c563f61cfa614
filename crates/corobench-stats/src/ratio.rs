//! How many times larger one sample is than another ("A serves 3.06× B"),
//! with a confidence interval that holds for a handful of trials.
//!
//! The estimate is the Hodges–Lehmann shift of the logarithms: the median of
//! all n_a·n_b differences ln aᵢ − ln bⱼ, exponentiated. Its interval is
//! Moses's: the k-th smallest and k-th largest of those differences, where k
//! comes from the null distribution of the Mann–Whitney U statistic (exact for
//! samples of up to [`crate::utest::EXACT_LIMIT`] values, its normal
//! approximation beyond). It is the interval that inverts the U test benchstat
//! runs: the ratios r it contains are those for which the U test of a against
//! r·b would not reject at 1 − confidence.
//!
//! Why this and not a t interval on the means: it assumes only that the
//! logarithms of the two samples have the same shape of distribution up to a
//! shift (A's trials are B's trials times a constant, plus the same kind of
//! noise), nothing about normality, and its coverage is exact for any sample
//! size. Ties among the differences make it slightly conservative.

use crate::StatsError;
use crate::sample::{check_confidence, check_positive};
use crate::special::{std_normal_cdf, std_normal_inv_cdf};
use crate::summary::quantile_of_sorted;
use crate::udist::u_cdf_without_ties;
use crate::utest::EXACT_LIMIT;

/// How far [`min_samples_for_ratio_ci`] searches before giving up.
pub const MAX_SEARCHED_SAMPLES: usize = 1000;

/// How the ranks of a [`RatioCi`]'s bounds were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RatioIntervalMethod {
    /// The exact distribution of U (both samples ≤ [`EXACT_LIMIT`] values).
    ExactU,
    /// The normal approximation of U with continuity correction.
    NormalApproximation,
}

/// The ratio a/b of two samples' locations with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioCi {
    /// exp(median of all ln aᵢ − ln bⱼ): the Hodges–Lehmann ratio.
    pub estimate: f64,
    /// exp of the `rank`-th smallest log difference.
    pub lo: f64,
    /// exp of the `rank`-th largest log difference.
    pub hi: f64,
    /// The confidence achieved, ≥ the requested one: 1 − 2·P(U < rank).
    /// Exact for [`RatioIntervalMethod::ExactU`].
    pub confidence: f64,
    /// Size of the first (numerator) sample.
    pub n_a: usize,
    /// Size of the second (denominator) sample.
    pub n_b: usize,
    /// 1-based rank of the bounds among the n_a·n_b sorted log differences.
    pub rank: usize,
    /// How `rank` was chosen.
    pub method: RatioIntervalMethod,
}

/// The Hodges–Lehmann ratio of `a` to `b` (both non-empty, finite, > 0):
/// exp(median of ln aᵢ − ln bⱼ over all pairs). For samples that differ by a
/// constant factor it is that factor; it is the ratio of medians' robust
/// cousin, using every pair instead of two middle values.
pub fn hodges_lehmann_ratio(a: &[f64], b: &[f64]) -> Result<f64, StatsError> {
    let differences = sorted_log_differences(a, b)?;
    Ok(quantile_of_sorted(&differences, 0.5).exp())
}

/// The Hodges–Lehmann ratio a/b with Moses's distribution-free interval at
/// `confidence` in (0, 1) (see the module documentation). The achieved
/// confidence is reported; it is at least the requested one.
///
/// Errors: an empty, non-finite or non-positive value;
/// [`StatsError::TooFewForInterval`] when the samples are too small for any
/// bounded interval at that confidence (3 against 3 at 95 %: even the extreme
/// differences cover only 90 %), naming the size that suffices.
pub fn ratio_ci(a: &[f64], b: &[f64], confidence: f64) -> Result<RatioCi, StatsError> {
    let differences = sorted_log_differences(a, b)?;
    check_confidence(confidence)?;
    let (n_a, n_b) = (a.len(), b.len());
    let bounds = moses_rank(n_a, n_b, confidence);
    if bounds.rank == 0 {
        return Err(StatsError::TooFewForInterval {
            n_a,
            n_b,
            confidence,
            min_each: min_samples_for_ratio_ci(confidence)?,
        });
    }
    let pairs = differences.len();
    Ok(RatioCi {
        estimate: quantile_of_sorted(&differences, 0.5).exp(),
        lo: differences[bounds.rank - 1].exp(),
        hi: differences[pairs - bounds.rank].exp(),
        confidence: bounds.confidence,
        n_a,
        n_b,
        rank: bounds.rank,
        method: bounds.method,
    })
}

/// The smallest n for which n against n values give a bounded [`ratio_ci`] at
/// `confidence` (4 at 95 %, 5 at 99 %); `None` if more than
/// [`MAX_SEARCHED_SAMPLES`] would be needed (confidence 1 never is bounded).
pub fn min_samples_for_ratio_ci(confidence: f64) -> Result<Option<usize>, StatsError> {
    check_confidence(confidence)?;
    Ok((1..=MAX_SEARCHED_SAMPLES).find(|&n| is_boundable(n, n, confidence)))
}

/// All ln aᵢ − ln bⱼ, sorted, after checking both samples.
fn sorted_log_differences(a: &[f64], b: &[f64]) -> Result<Vec<f64>, StatsError> {
    check_positive("a", a)?;
    check_positive("b", b)?;
    let log_b: Vec<f64> = b.iter().map(|v| v.ln()).collect();
    let mut differences: Vec<f64> = a
        .iter()
        .flat_map(|v| {
            let log_a = v.ln();
            log_b.iter().map(move |lb| log_a - lb)
        })
        .collect();
    differences.sort_by(f64::total_cmp);
    Ok(differences)
}

/// The rank of Moses's bounds and the confidence it achieves.
struct MosesRank {
    /// k ≥ 1, or 0 when no bounded interval reaches the confidence.
    rank: usize,
    confidence: f64,
    method: RatioIntervalMethod,
}

/// k = the number of u with P(U ≤ u) ≤ (1 − confidence)/2, so that
/// \[d₍ₖ₎, d₍ₘ₊₁₋ₖ₎\] misses the true shift with probability 2·P(U ≤ k − 1).
fn moses_rank(n_a: usize, n_b: usize, confidence: f64) -> MosesRank {
    let tail = (1.0 - confidence) / 2.0;
    let pairs = n_a * n_b;
    if n_a <= EXACT_LIMIT && n_b <= EXACT_LIMIT {
        // k ≤ m/2 always (the two bounds cannot cross), so that is as far as the cdf is needed.
        let cdf = u_cdf_without_ties(n_a, n_b, pairs / 2);
        let rank = cdf.iter().take_while(|&&p| p <= tail).count();
        let miss = if rank == 0 { 0.5 } else { cdf[rank - 1] };
        return MosesRank {
            rank,
            confidence: 1.0 - 2.0 * miss,
            method: RatioIntervalMethod::ExactU,
        };
    }
    let (mean, sd) = normal_u_moments(n_a, n_b);
    // P(U ≤ k − 1) ≈ Φ((k − 1 + ½ − mean)/sd) ≤ tail  ⇔  k ≤ mean + ½ + sd·Φ⁻¹(tail).
    let largest = if tail > 0.0 {
        (mean + 0.5 + sd * std_normal_inv_cdf(tail)).floor()
    } else {
        0.0
    };
    let rank = largest.clamp(0.0, (pairs / 2) as f64) as usize;
    let miss = std_normal_cdf((rank as f64 - 0.5 - mean) / sd);
    MosesRank {
        rank,
        confidence: if rank == 0 { 0.0 } else { 1.0 - 2.0 * miss },
        method: RatioIntervalMethod::NormalApproximation,
    }
}

/// Mean and standard deviation of U without ties.
fn normal_u_moments(n_a: usize, n_b: usize) -> (f64, f64) {
    let pairs = (n_a * n_b) as f64;
    let total = (n_a + n_b) as f64;
    (pairs / 2.0, (pairs * (total + 1.0) / 12.0).sqrt())
}

/// Whether samples of these sizes can bound an interval at `confidence`: the
/// single most extreme arrangement must be rare enough (cheap: no full cdf).
fn is_boundable(n_a: usize, n_b: usize, confidence: f64) -> bool {
    let tail = (1.0 - confidence) / 2.0;
    if n_a <= EXACT_LIMIT && n_b <= EXACT_LIMIT {
        u_cdf_without_ties(n_a, n_b, 0)[0] <= tail
    } else {
        moses_rank(n_a, n_b, confidence).rank >= 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_factor_is_recovered_exactly_enough() {
        let b = [100.0, 103.0, 98.0, 101.0, 99.5, 102.0];
        let a: Vec<f64> = b.iter().map(|v| 3.0 * v).collect();
        let ci = ratio_ci(&a, &b, 0.95).unwrap();
        assert!((ci.estimate - 3.0).abs() < 1e-12, "{ci:?}");
        assert!(ci.lo < 3.0 && 3.0 < ci.hi, "{ci:?}");
        assert_eq!(ci.method, RatioIntervalMethod::ExactU);
        assert!(ci.confidence >= 0.95);
    }

    #[test]
    fn four_against_four_uses_the_extremes() {
        // P(U = 0) = 1/70 ≤ 0.025 < 2/70: k = 1, the smallest and largest ratios.
        let a = [4.0, 5.0, 6.0, 7.0];
        let b = [1.0, 2.0, 3.0, 3.5];
        let ci = ratio_ci(&a, &b, 0.95).unwrap();
        assert_eq!(ci.rank, 1);
        assert!((ci.lo - 4.0 / 3.5).abs() < 1e-12 && (ci.hi - 7.0).abs() < 1e-12);
        assert!((ci.confidence - (1.0 - 2.0 / 70.0)).abs() < 1e-15);
    }

    #[test]
    fn too_few_values_name_the_size_that_suffices() {
        let err = ratio_ci(&[1.0, 2.0, 3.0], &[2.0, 3.0, 4.0], 0.95).unwrap_err();
        assert_eq!(
            err,
            StatsError::TooFewForInterval {
                n_a: 3,
                n_b: 3,
                confidence: 0.95,
                min_each: Some(4)
            }
        );
        assert!(err.to_string().contains("at least 4 values in each sample"));
        assert_eq!(min_samples_for_ratio_ci(0.99), Ok(Some(5)));
        assert_eq!(min_samples_for_ratio_ci(1.0), Ok(None));
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let b: Vec<f64> = (1..=60).map(|i| 100.0 + f64::from(i % 13)).collect();
        let a: Vec<f64> = b.iter().map(|v| 2.0 * v).collect();
        let ci = ratio_ci(&a, &b, 0.95).unwrap();
        assert_eq!(ci.method, RatioIntervalMethod::NormalApproximation);
        assert!(
            ci.lo <= 2.0 && 2.0 <= ci.hi && ci.confidence >= 0.95,
            "{ci:?}"
        );
    }

    #[test]
    fn bad_values_are_errors() {
        assert!(matches!(
            ratio_ci(&[1.0, 0.0], &[1.0], 0.95),
            Err(StatsError::NonPositive { what: "a", .. })
        ));
        assert!(matches!(
            hodges_lehmann_ratio(&[1.0], &[f64::NAN]),
            Err(StatsError::NonFinite { what: "b", .. })
        ));
        assert!(hodges_lehmann_ratio(&[], &[1.0]).is_err());
    }
}
