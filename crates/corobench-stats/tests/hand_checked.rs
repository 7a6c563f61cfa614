//! Cases checked by hand or tabulated from go-moremath (see
//! shared reference §2.2–2.3): exact order statistics and p-values.

use corobench_stats::{
    IntervalMethod, mann_whitney_u_test, median_ci, min_attainable_p, min_samples_for_median_ci,
    min_samples_to_detect, quantile_ci_orders,
};

/// (n, lo order, hi order, achieved confidence in percent to one decimal).
const MEDIAN_95: &[(usize, usize, usize, f64)] = &[
    (6, 1, 6, 96.9),
    (10, 2, 9, 97.9),
    (20, 6, 15, 95.9),
    (30, 10, 21, 95.7),
    (31, 10, 22, 96.9),
    (50, 18, 32, 95.0),
];

#[test]
fn median_intervals_at_95_percent() {
    for &(n, lo, hi, percent) in MEDIAN_95 {
        let ci = quantile_ci_orders(n, 0.5, 0.95).unwrap();
        assert_eq!((ci.lo_order, ci.hi_order), (lo, hi), "n = {n}");
        assert_eq!((ci.confidence * 1000.0).round() / 10.0, percent, "n = {n}");
        let method = if n <= 30 {
            IntervalMethod::ExactBinomial
        } else {
            IntervalMethod::NormalApproximation
        };
        assert_eq!(ci.method, method, "n = {n}");
    }
}

#[test]
fn exact_confidences_to_more_digits() {
    // 1 − 2·(1/2)⁶ = 0.96875; for n = 10, 1 − 2·(1 + 10)/1024 = 0.978515625.
    assert_eq!(
        quantile_ci_orders(6, 0.5, 0.95).unwrap().confidence,
        0.96875
    );
    let n10 = quantile_ci_orders(10, 0.5, 0.95).unwrap().confidence;
    assert!((n10 - 0.978_515_625).abs() < 1e-15);
    // n = 20, [x6, x15]: 1 − 2·P(K ≤ 5) with K ~ Bin(20, ½) = 1 − 2·21700/2²⁰.
    let n20 = quantile_ci_orders(20, 0.5, 0.95).unwrap().confidence;
    assert!((n20 - (1.0 - 2.0 * 21_700.0 / 1_048_576.0)).abs() < 1e-15);
}

#[test]
fn five_samples_need_a_sixth() {
    let ci = median_ci(&[10.0, 12.0, 11.0, 14.0, 13.0], 0.95).unwrap();
    assert_eq!(ci.lo, f64::NEG_INFINITY);
    assert_eq!(ci.hi, 14.0);
    assert_eq!(ci.estimate, 12.0);
    assert_eq!(min_samples_for_median_ci(0.95), Ok(Some(6)));
}

#[test]
fn five_against_five_fully_separated() {
    let old = [1.0, 2.0, 3.0, 4.0, 5.0];
    let new = [6.0, 7.0, 8.0, 9.0, 10.0];
    let p = mann_whitney_u_test(&old, &new).unwrap().p;
    assert!((p - 2.0 / 252.0).abs() < 1e-16, "p = {p}");
    // Swapping the samples mirrors U and leaves p alone.
    assert_eq!(mann_whitney_u_test(&new, &old).unwrap().p, p);
}

fn central_binomial(n: u32) -> u128 {
    (1..=u128::from(n)).fold(1, |c, i| c * (u128::from(n) + i) / i)
}

#[test]
fn minimum_p_for_equal_sizes_is_two_over_the_central_binomial() {
    for n in 1..=9 {
        let expected = (2.0 / central_binomial(n) as f64).min(1.0);
        let p = min_attainable_p(n as usize, n as usize).unwrap();
        assert!(
            (p - expected).abs() <= 1e-15 * expected,
            "n = {n}: {p} vs {expected}"
        );
    }
    assert_eq!(min_samples_to_detect(0.05), Ok(Some(4)));
}
