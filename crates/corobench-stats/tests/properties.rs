//! Property tests: invariants every input must keep.

use corobench_stats::{
    StatsError, UTestMethod, geomean_of_ratios, mann_whitney_u_test, max, median, median_ci, min,
};
use proptest::prelude::*;

const CONFIDENCES: [f64; 5] = [0.5, 0.8, 0.9, 0.95, 0.99];

fn finite_sample(max_len: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-1.0e6..1.0e6f64, 1..max_len)
}

/// Integer-valued samples: ties are common and shifting or scaling stays exact.
fn integer_sample(max_len: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec((-20i32..20).prop_map(f64::from), 1..max_len)
}

fn has_ties(old: &[f64], new: &[f64]) -> bool {
    let mut pooled: Vec<f64> = old.iter().chain(new).copied().collect();
    pooled.sort_by(f64::total_cmp);
    pooled.windows(2).any(|w| w[0] == w[1])
}

/// p, or 1 when every value is equal (the one error a finite sample can give).
fn p_value(old: &[f64], new: &[f64]) -> f64 {
    match mann_whitney_u_test(old, new) {
        Ok(test) => test.p,
        Err(StatsError::AllValuesEqual { .. }) => 1.0,
        Err(other) => panic!("unexpected error: {other}"),
    }
}

proptest! {
    #[test]
    fn interval_contains_the_median(values in finite_sample(80), which in 0..CONFIDENCES.len()) {
        let ci = median_ci(&values, CONFIDENCES[which]).unwrap();
        prop_assert!(ci.lo <= ci.estimate && ci.estimate <= ci.hi, "{ci:?}");
        prop_assert!(ci.confidence >= CONFIDENCES[which]);
        if ci.orders.is_bounded() {
            prop_assert!(ci.lo.is_finite() && ci.hi.is_finite());
        }
    }

    #[test]
    fn median_lies_between_the_extremes(values in finite_sample(50)) {
        let m = median(&values).unwrap();
        prop_assert!(min(&values).unwrap() <= m && m <= max(&values).unwrap());
    }

    #[test]
    fn p_is_a_probability(old in integer_sample(40), new in integer_sample(40)) {
        match mann_whitney_u_test(&old, &new) {
            Ok(test) => prop_assert!(test.p > 0.0 && test.p <= 1.0, "{test:?}"),
            Err(StatsError::AllValuesEqual { value, .. }) => {
                prop_assert!(old.iter().chain(&new).all(|&v| v == value));
            }
            Err(other) => prop_assert!(false, "unexpected error: {other}"),
        }
    }

    #[test]
    fn p_is_symmetric_without_ties(old in finite_sample(40), new in finite_sample(40)) {
        prop_assume!(!has_ties(&old, &new));
        let (forward, backward) = (p_value(&old, &new), p_value(&new, &old));
        prop_assert!((forward - backward).abs() <= 1e-12 * forward, "{forward} vs {backward}");
    }

    #[test]
    fn p_is_symmetric_with_ties(old in integer_sample(30), new in integer_sample(30)) {
        prop_assert_eq!(p_value(&old, &new), p_value(&new, &old));
    }

    #[test]
    fn p_is_symmetric_in_the_normal_approximation(
        old in prop::collection::vec((0i32..8).prop_map(f64::from), 26..60),
        new in prop::collection::vec((0i32..8).prop_map(f64::from), 26..60),
    ) {
        prop_assert_eq!(p_value(&old, &new), p_value(&new, &old));
    }

    #[test]
    fn shifting_both_samples_keeps_p(
        old in integer_sample(30), new in integer_sample(30), shift in -1_000_000i32..1_000_000,
    ) {
        let shift = f64::from(shift);
        let moved = |xs: &[f64]| xs.iter().map(|x| x + shift).collect::<Vec<_>>();
        prop_assert_eq!(p_value(&old, &new), p_value(&moved(&old), &moved(&new)));
    }

    #[test]
    fn scaling_both_samples_keeps_p(
        old in integer_sample(30), new in integer_sample(30), scale in 0.001..1000.0f64,
    ) {
        let scaled = |xs: &[f64]| xs.iter().map(|x| x * scale).collect::<Vec<_>>();
        prop_assert_eq!(p_value(&old, &new), p_value(&scaled(&old), &scaled(&new)));
    }

    #[test]
    fn exact_p_matches_brute_force_enumeration(
        old in prop::collection::vec((0i32..5).prop_map(f64::from), 1..7),
        new in prop::collection::vec((0i32..5).prop_map(f64::from), 1..7),
    ) {
        prop_assume!(old.iter().chain(&new).any(|&v| v != old[0]));
        let test = mann_whitney_u_test(&old, &new).unwrap();
        prop_assert_ne!(test.method, UTestMethod::NormalApproximation);
        let expected = enumerated_p(&old, &new);
        prop_assert!((test.p - expected).abs() <= 1e-12, "{} vs {expected}", test.p);
    }

    #[test]
    fn geomean_of_identical_rows_is_one(
        values in prop::collection::vec(-1.0e9..1.0e9f64, 1..30),
    ) {
        let rows: Vec<(f64, f64)> = values.iter().map(|&v| (v, v)).collect();
        prop_assert_eq!(geomean_of_ratios(&rows), Ok(1.0));
    }
}

/// The exact two-sided p by trying every split of the pooled values: twice the
/// smaller of P(U_old ≤ u_old) and P(U_old ≥ u_old), capped at 1, or 1 when
/// U_old = U_new.
fn enumerated_p(old: &[f64], new: &[f64]) -> f64 {
    let pooled: Vec<f64> = old.iter().chain(new).copied().collect();
    // Twice the average rank: 2·(number below) + (number equal) + 1.
    let twice_rank: Vec<usize> = pooled
        .iter()
        .map(|&x| {
            let below = pooled.iter().filter(|&&y| y < x).count();
            let equal = pooled.iter().filter(|&&y| y == x).count();
            2 * below + equal + 1
        })
        .collect();
    let (n1, n2) = (old.len(), new.len());
    let twice_u = |members: &[usize]| -> usize {
        members.iter().map(|&i| twice_rank[i]).sum::<usize>() - n1 * (n1 + 1)
    };
    let observed = twice_u(&(0..n1).collect::<Vec<_>>());
    if observed == n1 * n2 {
        return 1.0;
    }
    let (mut at_or_below, mut at_or_above, mut total) = (0u64, 0u64, 0u64);
    for mask in 0u32..(1 << pooled.len()) {
        if mask.count_ones() as usize != n1 {
            continue;
        }
        let members: Vec<usize> = (0..pooled.len()).filter(|i| mask & (1 << i) != 0).collect();
        total += 1;
        let u = twice_u(&members);
        at_or_below += u64::from(u <= observed);
        at_or_above += u64::from(u >= observed);
    }
    (2.0 * at_or_below.min(at_or_above) as f64 / total as f64).min(1.0)
}
