//! The two-sided Mann–Whitney U test, the significance test benchstat runs on
//! every row (go-moremath's `MannWhitneyUTest` with `LocationDiffers`, except
//! for the tail used with ties: see [`mann_whitney_u_test`]).

use std::f64::consts::FRAC_1_SQRT_2;

use crate::StatsError;
use crate::sample::{check_alpha, sorted_copy};
use crate::special::erfc;
use crate::udist::u_lower_tail;

/// Largest sample size (each side) for which the exact U distribution is used
/// when there are no ties (go-moremath's `MannWhitneyExactLimit`).
pub const EXACT_LIMIT: usize = 50;

/// Largest sample size (each side) for which the exact U distribution is used
/// when there are ties (go-moremath's `MannWhitneyTiesExactLimit`).
pub const TIES_EXACT_LIMIT: usize = 25;

/// How far [`min_samples_to_detect`] searches before giving up.
pub const MAX_SEARCHED_SAMPLES: usize = 1000;

/// How a [`UTest`]'s p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UTestMethod {
    /// Exact U distribution, no tied values.
    Exact,
    /// Exact U distribution conditional on the observed tie groups.
    ExactWithTies,
    /// Normal approximation with tie and continuity corrections.
    NormalApproximation,
}

/// The result of a two-sided Mann–Whitney U test of `old` against `new`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UTest {
    /// Size of the old (first) sample.
    pub n_old: usize,
    /// Size of the new (second) sample.
    pub n_new: usize,
    /// U of the old sample: pairs (old, new) with old > new, ties counted ½.
    pub u_old: f64,
    /// U of the new sample, n_old · n_new − u_old.
    pub u_new: f64,
    /// Two-sided p-value in (0, 1] (the normal approximation can underflow to 0
    /// only for samples of thousands of values that do not overlap at all).
    pub p: f64,
    /// Whether any value occurs more than once in the pooled samples.
    pub has_ties: bool,
    /// How `p` was computed.
    pub method: UTestMethod,
}

/// Two-sided Mann–Whitney U test of the null hypothesis that `old` and `new`
/// come from one population, against "their locations differ".
///
/// Ties get average ranks. The exact distribution of U is used when there are
/// no ties and both sizes are ≤ [`EXACT_LIMIT`], or with ties and both ≤
/// [`TIES_EXACT_LIMIT`]; there p is twice the smaller tail,
/// 2·min(P(U_old ≤ u_old), P(U_old ≥ u_old)), capped at 1, and p = 1 when
/// U_old = U_new. Otherwise the normal approximation with
/// σ = √(n₁n₂((N+1) − Σ(t³−t)/(N(N−1)))/12) and a ±½ continuity correction.
///
/// Differences from the references, both only with ties:
/// - scipy's `method="exact"` ignores ties; we (like go-moremath) condition on them.
/// - With ties the exact distribution can be asymmetric. go-moremath doubles
///   the lower tail of U_old at min(U_old, U_new), which is the wrong tail when
///   U_new is the smaller: it gives p = 0 for [17, 17] against [−17, −17, −17]
///   and p > 1 for [1] against [1, 2]. We double the smaller of the two tails,
///   so p is symmetric in the argument order and always in (0, 1]; without
///   ties both rules give the same p.
///
/// Errors: an empty or non-finite sample; [`StatsError::AllValuesEqual`] when
/// every value is the same (benchstat then reports p = 1 with a warning).
pub fn mann_whitney_u_test(old: &[f64], new: &[f64]) -> Result<UTest, StatsError> {
    let old_sorted = sorted_copy("old", old)?;
    let new_sorted = sorted_copy("new", new)?;
    let ranked = rank_sum(&old_sorted, &new_sorted);
    if ranked.tie_groups.len() == 1 {
        return Err(StatsError::AllValuesEqual {
            value: old_sorted[0],
            count: old.len() + new.len(),
        });
    }
    let (n1, n2) = (old.len(), new.len());
    let u_old = ranked.old_rank_sum - (n1 * (n1 + 1)) as f64 / 2.0;
    let u_new = (n1 * n2) as f64 - u_old;
    let has_ties = ranked.tie_groups.iter().any(|&t| t > 1);
    let limit = if has_ties {
        TIES_EXACT_LIMIT
    } else {
        EXACT_LIMIT
    };
    let (p, method) = if n1 <= limit && n2 <= limit {
        let method = if has_ties {
            UTestMethod::ExactWithTies
        } else {
            UTestMethod::Exact
        };
        (exact_p(n1, n2, &ranked.tie_groups, u_old, u_new), method)
    } else {
        let p = normal_p(n1, n2, &ranked.tie_groups, u_old);
        (p, UTestMethod::NormalApproximation)
    };
    Ok(UTest {
        n_old: n1,
        n_new: n2,
        u_old,
        u_new,
        p,
        has_ties,
        method,
    })
}

/// The smallest p-value the test can give for samples of these sizes (two
/// samples that do not overlap), so a caller can warn that a difference cannot
/// be detected at all: 2/C(n₁+n₂, n₁) in the exact range, 1/3 for 2 vs 2.
pub fn min_attainable_p(n_old: usize, n_new: usize) -> Result<f64, StatsError> {
    let old: Vec<f64> = (0..n_old).map(|i| i as f64).collect();
    let new: Vec<f64> = (0..n_new).map(|i| (n_old + i) as f64).collect();
    Ok(mann_whitney_u_test(&old, &new)?.p)
}

/// The smallest equal sample size n for which n against n can reach p ≤ `alpha`
/// (4 at 0.05), for benchstat's "need >= 4 samples to detect a difference"
/// warning; `None` if more than [`MAX_SEARCHED_SAMPLES`] would be needed.
pub fn min_samples_to_detect(alpha: f64) -> Result<Option<usize>, StatsError> {
    check_alpha(alpha)?;
    for n in 1..=MAX_SEARCHED_SAMPLES {
        if min_attainable_p(n, n)? <= alpha {
            return Ok(Some(n));
        }
    }
    Ok(None)
}

struct RankSum {
    /// Sum of the (average) ranks of the old sample's values.
    old_rank_sum: f64,
    /// Sizes of the groups of equal values in the pooled sample, ascending.
    tie_groups: Vec<usize>,
}

/// Pools two sorted samples and sums the old sample's average ranks.
fn rank_sum(old_sorted: &[f64], new_sorted: &[f64]) -> RankSum {
    let mut pooled: Vec<(f64, bool)> = Vec::with_capacity(old_sorted.len() + new_sorted.len());
    pooled.extend(old_sorted.iter().map(|&v| (v, true)));
    pooled.extend(new_sorted.iter().map(|&v| (v, false)));
    pooled.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut old_rank_sum = 0.0;
    let mut tie_groups = Vec::new();
    let mut start = 0;
    while start < pooled.len() {
        // `==` rather than total order, so −0.0 and 0.0 tie as they should.
        let end = start
            + pooled[start..]
                .iter()
                .take_while(|p| p.0 == pooled[start].0)
                .count();
        let old_in_group = pooled[start..end].iter().filter(|p| p.1).count();
        // Ranks start+1 ..= end share their average.
        let average_rank = (start + 1 + end) as f64 / 2.0;
        old_rank_sum += average_rank * old_in_group as f64;
        tie_groups.push(end - start);
        start = end;
    }
    RankSum {
        old_rank_sum,
        tie_groups,
    }
}

fn exact_p(n1: usize, n2: usize, tie_groups: &[usize], u_old: f64, u_new: f64) -> f64 {
    if u_old == u_new {
        // Doubling a tail would count the mass at the centre twice.
        return 1.0;
    }
    // With ties the distribution of U_old can be asymmetric, so the two tails
    // are computed separately: P(U_old ≤ u_old) and P(U_old ≥ u_old), the
    // latter as P(U_new ≤ u_new) with the samples' roles swapped.
    let twice = |u: f64| (2.0 * u).round() as usize;
    let lower = u_lower_tail(n1, n2, tie_groups, twice(u_old));
    let upper = u_lower_tail(n2, n1, tie_groups, twice(u_new));
    (2.0 * lower.min(upper)).min(1.0)
}

fn normal_p(n1: usize, n2: usize, tie_groups: &[usize], u_old: f64) -> f64 {
    let total = (n1 + n2) as f64;
    let product = (n1 * n2) as f64;
    let tie_term: f64 = tie_groups.iter().map(|&t| (t * t * t - t) as f64).sum();
    let sigma = (product * ((total + 1.0) - tie_term / (total * (total - 1.0))) / 12.0).sqrt();
    let distance = (u_old - product / 2.0).abs();
    // Continuity correction towards the centre; a distance of ½ or less is no evidence.
    let corrected = (distance - 0.5).max(0.0);
    let z = corrected / sigma;
    // Two-sided tail 2·(1 − Φ(z)) = erfc(z/√2), exact in the far tail.
    erfc(z * FRAC_1_SQRT_2).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fully_separated_five_against_five() {
        let test =
            mann_whitney_u_test(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert_eq!(test.method, UTestMethod::Exact);
        assert_eq!((test.u_old, test.u_new), (0.0, 25.0));
        assert!((test.p - 2.0 / 252.0).abs() < 1e-15);
    }

    #[test]
    fn equal_u_gives_p_one() {
        let test = mann_whitney_u_test(&[1.0, 4.0], &[2.0, 3.0]).unwrap();
        assert_eq!(test.u_old, test.u_new);
        assert_eq!(test.p, 1.0);
    }

    #[test]
    fn identical_values_are_reported_not_tested() {
        let err = mann_whitney_u_test(&[3.0, 3.0], &[3.0]).unwrap_err();
        assert_eq!(
            err,
            StatsError::AllValuesEqual {
                value: 3.0,
                count: 3
            }
        );
        assert!(err.to_string().contains("report p = 1"));
    }

    #[test]
    fn ties_get_average_ranks() {
        // Pooled: 1(old) 2(old) 2(new) 3(new): ranks 1, 2.5, 2.5, 4.
        let test = mann_whitney_u_test(&[1.0, 2.0], &[2.0, 3.0]).unwrap();
        assert_eq!(test.u_old, 1.0 + 2.5 - 3.0);
        assert!(test.has_ties);
        assert_eq!(test.method, UTestMethod::ExactWithTies);
    }

    #[test]
    fn exact_p_with_asymmetric_ties_is_capped_at_one() {
        // Both tails of U_old are 2/3 or more here; a probability cannot exceed 1.
        let test = mann_whitney_u_test(&[1.0], &[1.0, 2.0]).unwrap();
        assert_eq!(test.p, 1.0);
        let swapped = mann_whitney_u_test(&[1.0, 2.0], &[1.0]).unwrap();
        assert_eq!(swapped.p, 1.0);
    }

    #[test]
    fn exact_p_with_ties_uses_the_tail_of_the_smaller_u() {
        // Pooled tie groups {−17 ×3} < {17 ×2}: old takes the top group in 1 of
        // C(5, 2) = 10 equally likely splits, so p = 2/10, never 0.
        let test = mann_whitney_u_test(&[17.0, 17.0], &[-17.0, -17.0, -17.0]).unwrap();
        assert_eq!((test.u_old, test.u_new), (6.0, 0.0));
        assert!((test.p - 0.2).abs() < 1e-15, "{test:?}");
        let swapped = mann_whitney_u_test(&[-17.0, -17.0, -17.0], &[17.0, 17.0]).unwrap();
        assert!((swapped.p - 0.2).abs() < 1e-15, "{swapped:?}");
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let old: Vec<f64> = (0..60).map(f64::from).collect();
        let new: Vec<f64> = (0..60).map(|i| f64::from(i) + 0.5).collect();
        let test = mann_whitney_u_test(&old, &new).unwrap();
        assert_eq!(test.method, UTestMethod::NormalApproximation);
        assert!(test.p > 0.5 && test.p <= 1.0);
    }

    #[test]
    fn minimum_p_and_sample_need() {
        assert_eq!(min_attainable_p(1, 1), Ok(1.0));
        assert!((min_attainable_p(2, 2).unwrap() - 1.0 / 3.0).abs() < 1e-15);
        assert!((min_attainable_p(4, 4).unwrap() - 2.0 / 70.0).abs() < 1e-15);
        assert_eq!(min_samples_to_detect(0.05), Ok(Some(4)));
        assert_eq!(min_samples_to_detect(0.01), Ok(Some(5)));
        assert!(min_attainable_p(0, 3).is_err());
    }
}
