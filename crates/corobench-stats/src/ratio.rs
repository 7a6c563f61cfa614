//! A confidence interval for how many times larger one sample's values are
//! than another's (a/b), without assuming a distribution: the Hodges–Lehmann
//! estimate of the shift between log(a) and log(b), with the Moses interval
//! built from the exact Mann–Whitney distribution, both exponentiated.
//!
//! The m·n pairwise differences dᵢⱼ = log aᵢ − log bⱼ are sorted. Their
//! median estimates the shift; under a pure shift the number of differences
//! below the true shift is distributed as the U statistic, so with
//! k = 1 + the largest c such that P(U ≤ c) ≤ (1 − confidence)/2, the
//! interval \[d₍ₖ₎, d₍ₘₙ₊₁₋ₖ₎\] covers the shift with probability
//! 1 − 2·P(U ≤ k − 1). When no c qualifies (3 against 3 at 95 %) the
//! interval is unbounded. The exact distribution is used while both samples
//! hold at most [`EXACT_LIMIT`](crate::utest::EXACT_LIMIT) values, the normal
//! approximation of U beyond. The differences are never all held in memory:
//! each order statistic is found by bisection on its value, counting the
//! differences below a candidate in one pass over the two sorted samples.

use crate::StatsError;
use crate::sample::{check_confidence, sorted_copy};
use crate::special::{std_normal_cdf, std_normal_inv_cdf};
use crate::utest::EXACT_LIMIT;

/// How the order statistics of a [`RatioCi`] were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RatioMethod {
    /// Exact Mann–Whitney critical values (both samples ≤ 50 values).
    Exact,
    /// The normal approximation of U, with continuity correction.
    NormalApproximation,
}

/// The ratio a/b of two samples' locations, with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioCi {
    /// exp of the Hodges–Lehmann shift: the median of all pairwise aᵢ/bⱼ.
    pub estimate: f64,
    /// Lower bound; 0 when the samples are too small for the confidence.
    pub lo: f64,
    /// Upper bound; +∞ when the samples are too small for the confidence.
    pub hi: f64,
    /// The confidence the interval achieves, ≥ the requested level (for the
    /// normal approximation, the approximation's own figure).
    pub confidence: f64,
    pub n_a: usize,
    pub n_b: usize,
    pub method: RatioMethod,
}

impl RatioCi {
    /// True when both bounds are finite and positive.
    pub fn is_bounded(&self) -> bool {
        self.lo > 0.0 && self.hi.is_finite()
    }
}

/// The ratio a/b with a distribution-free interval at `confidence` (see the
/// module documentation).
///
/// # Errors
/// An empty or non-finite sample, a value ≤ 0 (a ratio compares
/// logarithms), or a confidence outside (0, 1].
pub fn ratio_ci(a: &[f64], b: &[f64], confidence: f64) -> Result<RatioCi, StatsError> {
    check_confidence(confidence)?;
    let log_a = logs("a", a)?;
    let log_b = logs("b", b)?;
    let differences = Differences {
        a: &log_a,
        b: &log_b,
    };
    let (m, n) = (log_a.len(), log_b.len());
    let pairs = m * n;
    let middle = if pairs % 2 == 1 {
        differences.order(pairs / 2 + 1)
    } else {
        0.5 * (differences.order(pairs / 2) + differences.order(pairs / 2 + 1))
    };
    let tail = (1.0 - confidence) / 2.0;
    let (k, achieved, method) = if m <= EXACT_LIMIT && n <= EXACT_LIMIT {
        let (k, achieved) = exact_order(m, n, tail);
        (k, achieved, RatioMethod::Exact)
    } else {
        let (k, achieved) = approximate_order(m, n, tail);
        (k, achieved, RatioMethod::NormalApproximation)
    };
    let (lo, hi) = if k == 0 {
        (0.0, f64::INFINITY)
    } else {
        (
            differences.order(k).exp(),
            differences.order(pairs + 1 - k).exp(),
        )
    };
    Ok(RatioCi {
        estimate: middle.exp(),
        lo,
        hi,
        confidence: achieved,
        n_a: m,
        n_b: n,
        method,
    })
}

/// The sorted natural logarithms of a sample of positive finite values.
fn logs(what: &'static str, values: &[f64]) -> Result<Vec<f64>, StatsError> {
    let sorted = sorted_copy(what, values)?;
    if let Some(index) = values.iter().position(|&v| v <= 0.0) {
        return Err(StatsError::NotPositive {
            what,
            index,
            value: values[index],
        });
    }
    Ok(sorted.into_iter().map(f64::ln).collect())
}

/// Every difference aᵢ − bⱼ of two sorted samples, found by order without
/// holding them all.
struct Differences<'s> {
    a: &'s [f64],
    b: &'s [f64],
}

/// Halvings of the search interval: from the widest span two logarithms of
/// finite floats can have (about 1,420) this reaches far below any gap
/// between two distinct differences.
const BISECTIONS: usize = 1_100;

impl Differences<'_> {
    /// How many differences are ≤ `t`, and the largest of them (−∞ when
    /// none is). For one aᵢ those are aᵢ − bⱼ for a suffix of the sorted b,
    /// and the suffix only shortens as aᵢ grows: one pass with two pointers.
    fn at_most(&self, t: f64) -> (usize, f64) {
        let (mut count, mut largest) = (0, f64::NEG_INFINITY);
        // The first index j with a − b[j] ≤ t.
        let mut first = 0;
        for &a in self.a {
            while first < self.b.len() && a - self.b[first] > t {
                first += 1;
            }
            if first < self.b.len() {
                count += self.b.len() - first;
                largest = largest.max(a - self.b[first]);
            }
        }
        (count, largest)
    }

    /// The `k`-th smallest difference (1-based, 1 ≤ k ≤ m·n).
    fn order(&self, k: usize) -> f64 {
        let (Some(&a_min), Some(&a_max), Some(&b_min), Some(&b_max)) =
            (self.a.first(), self.a.last(), self.b.first(), self.b.last())
        else {
            return f64::NAN;
        };
        // Invariant: fewer than k differences are ≤ low, at least k are ≤ high.
        let (mut low, mut high) = (a_min - b_max, a_max - b_min);
        if self.at_most(low).0 >= k {
            return low;
        }
        for _ in 0..BISECTIONS {
            let middle = low + (high - low) / 2.0;
            if middle <= low || middle >= high {
                break;
            }
            if self.at_most(middle).0 >= k {
                high = middle;
            } else {
                low = middle;
            }
        }
        // The k-th difference lies in (low, high], which holds no other
        // distinct difference once the two are adjacent floats.
        self.at_most(high).1
    }
}

/// k and the achieved confidence from the exact distribution of U for
/// samples of m and n values: k = 0 when even U = 0 is too likely.
fn exact_order(m: usize, n: usize, tail: f64) -> (usize, f64) {
    let ways = u_counts(m, n);
    let total: f64 = ways.iter().sum();
    let mut below = 0.0;
    let mut k = 0;
    for (c, count) in ways.iter().enumerate() {
        let next = below + count / total;
        if next > tail {
            break;
        }
        below = next;
        k = c + 1;
    }
    (k, 1.0 - 2.0 * below)
}

/// How many of the C(m + n, m) arrangements give each value of U (no ties):
/// U is the sum over a's values of the b values below each, a partition of
/// U into m parts of at most n each. Parts are added size by size; each
/// size may repeat, so the count table is walked upwards.
fn u_counts(m: usize, n: usize) -> Vec<f64> {
    let most = m * n;
    let width = most + 1;
    // ways[parts * width + sum]
    let mut ways = vec![0.0_f64; (m + 1) * width];
    ways[0] = 1.0;
    for size in 0..=n {
        for parts in 1..=m {
            for sum in size..width {
                let from = ways[(parts - 1) * width + sum - size];
                ways[parts * width + sum] += from;
            }
        }
    }
    ways[m * width..].to_vec()
}

/// k and its confidence from the normal approximation of U:
/// mean mn/2, variance mn(m + n + 1)/12, continuity-corrected.
fn approximate_order(m: usize, n: usize, tail: f64) -> (usize, f64) {
    if tail <= 0.0 {
        return (0, 1.0);
    }
    let pairs = (m * n) as f64;
    let sigma = (pairs * (m + n + 1) as f64 / 12.0).sqrt();
    let z = -std_normal_inv_cdf(tail);
    // P(U ≤ c) ≈ Φ((c + ½ − mn/2)/σ) ≤ tail  ⇔  c ≤ mn/2 − zσ − ½.
    let largest = (pairs / 2.0 - z * sigma - 0.5).floor();
    if largest < 0.0 {
        return (0, 1.0);
    }
    let below = std_normal_cdf((largest + 0.5 - pairs / 2.0) / sigma);
    (largest as usize + 1, 1.0 - 2.0 * below)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    /// Every difference, sorted: what the bisection must agree with.
    fn brute_force(a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut all: Vec<f64> = a
            .iter()
            .flat_map(|x| b.iter().map(move |y| x.ln() - y.ln()))
            .collect();
        all.sort_by(f64::total_cmp);
        all
    }

    #[test]
    fn order_statistics_match_the_full_list() {
        let a = [3.0, 1.5, 2.5, 2.0, 9.0];
        let b = [1.0, 1.0, 1.25, 4.0];
        let all = brute_force(&a, &b);
        let (la, lb) = (logs("a", &a).unwrap(), logs("b", &b).unwrap());
        let differences = Differences { a: &la, b: &lb };
        for (k, expected) in all.iter().enumerate() {
            assert_eq!(differences.order(k + 1), *expected, "k = {}", k + 1);
        }
    }

    #[test]
    fn u_counts_are_the_mann_whitney_frequencies() {
        // 6 against 6: 1, 1, 2, 3, 5, 7, … of C(12, 6) = 924 arrangements.
        let counts = u_counts(6, 6);
        assert_eq!(&counts[..6], &[1.0, 1.0, 2.0, 3.0, 5.0, 7.0]);
        assert_eq!(counts.iter().sum::<f64>(), 924.0);
        assert_eq!(counts.len(), 37);
    }

    #[test]
    fn six_against_six_uses_the_sixth_differences_from_each_end() {
        // P(U ≤ 5) = 19/924 ≤ 0.025 < P(U ≤ 6) = 26/924.
        let (k, confidence) = exact_order(6, 6, 0.025);
        assert_eq!(k, 6);
        assert!(close(confidence, 1.0 - 2.0 * 19.0 / 924.0));
        // 3 against 3: P(U = 0) = 1/20 > 0.025, so no bound exists.
        assert_eq!(exact_order(3, 3, 0.025).0, 0);
        // 4 against 4: only U = 0 (1/70) fits: the widest differences.
        assert_eq!(exact_order(4, 4, 0.025).0, 1);
    }

    #[test]
    fn a_known_ratio_is_found_with_its_interval() {
        let b = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5];
        let a: Vec<f64> = b.iter().map(|v| v * 2.0).collect();
        let ci = ratio_ci(&a, &b, 0.95).unwrap();
        assert!(close(ci.estimate, 2.0), "{ci:?}");
        assert!(ci.lo < 2.0 && ci.hi > 2.0 && ci.is_bounded(), "{ci:?}");
        assert_eq!(ci.method, RatioMethod::Exact);
        assert!(ci.confidence >= 0.95);
        let all = brute_force(&a, &b);
        assert!(close(ci.lo, all[5].exp()) && close(ci.hi, all[30].exp()));
    }

    #[test]
    fn swapping_the_samples_inverts_the_ratio() {
        let a = [5.0, 7.0, 6.5, 5.5, 8.0, 6.0, 7.5];
        let b = [2.0, 3.5, 2.5, 3.0, 2.2, 2.8];
        let ab = ratio_ci(&a, &b, 0.95).unwrap();
        let ba = ratio_ci(&b, &a, 0.95).unwrap();
        assert!(close(ab.estimate, 1.0 / ba.estimate));
        assert!(close(ab.lo, 1.0 / ba.hi) && close(ab.hi, 1.0 / ba.lo));
    }

    #[test]
    fn too_few_values_give_an_unbounded_interval() {
        let ci = ratio_ci(&[2.0, 2.1, 1.9], &[1.0, 1.1, 0.9], 0.95).unwrap();
        assert!(!ci.is_bounded());
        assert_eq!((ci.lo, ci.hi), (0.0, f64::INFINITY));
        assert!(close(ci.estimate, 2.0), "{ci:?}");
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let a: Vec<f64> = (1..=60).map(|i| 3.0 + f64::from(i) / 60.0).collect();
        let b: Vec<f64> = (1..=55).map(|i| 1.0 + f64::from(i) / 55.0).collect();
        let ci = ratio_ci(&a, &b, 0.95).unwrap();
        assert_eq!(ci.method, RatioMethod::NormalApproximation);
        assert!(ci.is_bounded() && ci.lo < ci.estimate && ci.estimate < ci.hi);
        assert!(ci.confidence >= 0.95 && ci.confidence < 0.96, "{ci:?}");
    }

    #[test]
    fn the_approximation_agrees_with_the_exact_order_near_the_limit() {
        let (exact, _) = exact_order(50, 50, 0.025);
        let (approximate, _) = approximate_order(50, 50, 0.025);
        assert!(exact.abs_diff(approximate) <= 1, "{exact} {approximate}");
    }

    #[test]
    fn bad_samples_are_refused() {
        assert!(matches!(
            ratio_ci(&[1.0, 0.0], &[1.0], 0.95),
            Err(StatsError::NotPositive { index: 1, .. })
        ));
        assert!(ratio_ci(&[], &[1.0], 0.95).is_err());
        assert!(ratio_ci(&[1.0], &[f64::NAN], 0.95).is_err());
        assert!(ratio_ci(&[1.0], &[1.0], 1.5).is_err());
    }
}
