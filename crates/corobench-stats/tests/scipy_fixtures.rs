//! Checks against reference values computed with numpy and scipy by
//! `scripts/stats_fixtures.py` (committed under `tests/fixtures`).

mod common;

use common::{assert_close, read_json};
use corobench_stats::{
    IntervalMethod, UTestMethod, geometric_mean, mann_whitney_u_test, max, mean, median_ci, min,
    quantile, quantile_ci_orders, special,
};
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixture<T> {
    cases: T,
}

#[derive(Deserialize)]
struct QuantileCase {
    values: Vec<f64>,
    quantiles: Vec<(f64, f64)>,
    min: f64,
    max: f64,
    mean: f64,
    geometric_mean: f64,
}

#[test]
fn quantiles_match_numpy_median_unbiased() {
    let fixture: Fixture<Vec<QuantileCase>> = read_json("quantiles.json");
    let mut checked = 0;
    for case in &fixture.cases {
        let n = case.values.len();
        for &(q, expected) in &case.quantiles {
            assert_close(
                quantile(&case.values, q).unwrap(),
                expected,
                &format!("n={n} q={q}"),
            );
            checked += 1;
        }
        assert_eq!(min(&case.values).unwrap(), case.min);
        assert_eq!(max(&case.values).unwrap(), case.max);
        assert_close(mean(&case.values).unwrap(), case.mean, "mean");
        assert_close(
            geometric_mean(&case.values).unwrap(),
            case.geometric_mean,
            "geomean",
        );
    }
    assert!(checked >= 100, "only {checked} quantiles in the fixture");
}

#[derive(Deserialize)]
struct OrderCase {
    n: usize,
    q: f64,
    confidence: f64,
    lo_order: usize,
    hi_order: usize,
    achieved: f64,
    exact_coverage: f64,
    method: String,
    last_step_tied: bool,
}

#[derive(Deserialize)]
struct CiSampleCase {
    values: Vec<f64>,
    confidence: f64,
    median: f64,
    lo: Option<f64>,
    hi: Option<f64>,
}

#[derive(Deserialize)]
struct MedianCiCases {
    orders: Vec<OrderCase>,
    samples: Vec<CiSampleCase>,
}

#[test]
fn order_statistic_intervals_match_scipy_binomial() {
    let fixture: Fixture<MedianCiCases> = read_json("median_ci.json");
    for case in &fixture.cases.orders {
        let context = format!("n={} q={} confidence={}", case.n, case.q, case.confidence);
        let ci = quantile_ci_orders(case.n, case.q, case.confidence).unwrap();
        let orders = (ci.lo_order, ci.hi_order);
        if orders != (case.lo_order, case.hi_order) {
            // The rule breaks a final tie to the left; benchstat's go-moremath
            // sometimes breaks it right for 21 ≤ n ≤ 30 (see quantile_ci.rs).
            // The mirror interval has the same coverage.
            assert!(
                case.last_step_tied && (21..=30).contains(&case.n),
                "{context}"
            );
            assert_eq!(orders, (case.lo_order + 1, case.hi_order + 1), "{context}");
        }
        let method = match ci.method {
            IntervalMethod::ExactBinomial => "exact_binomial",
            IntervalMethod::NormalApproximation => "normal_approximation",
        };
        assert_eq!(method, case.method, "{context}");
        assert_close(ci.confidence, case.achieved, &context);
        assert_close(ci.exact_coverage(), case.exact_coverage, &context);
        assert!(
            ci.confidence >= case.confidence,
            "{context}: below the requested level"
        );
    }
    assert!(fixture.cases.orders.len() >= 300);
}

#[test]
fn median_intervals_of_samples_match_scipy() {
    let fixture: Fixture<MedianCiCases> = read_json("median_ci.json");
    for case in &fixture.cases.samples {
        let ci = median_ci(&case.values, case.confidence).unwrap();
        let n = case.values.len();
        assert_close(ci.estimate, case.median, &format!("median, n={n}"));
        assert_eq!(
            ci.lo,
            case.lo.unwrap_or(f64::NEG_INFINITY),
            "lower bound, n={n}"
        );
        assert_eq!(
            ci.hi,
            case.hi.unwrap_or(f64::INFINITY),
            "upper bound, n={n}"
        );
    }
}

#[derive(Deserialize)]
struct UTestCase {
    old: Vec<f64>,
    new: Vec<f64>,
    method: String,
    u_old: f64,
    p: f64,
}

#[test]
fn mann_whitney_matches_scipy_and_enumeration() {
    let fixture: Fixture<Vec<UTestCase>> = read_json("utest.json");
    let mut methods_seen = Vec::new();
    for case in &fixture.cases {
        let context = format!("{} vs {} ({})", case.old.len(), case.new.len(), case.method);
        let test = mann_whitney_u_test(&case.old, &case.new).unwrap();
        let method = match test.method {
            UTestMethod::Exact => "exact",
            UTestMethod::ExactWithTies => "exact_with_ties",
            UTestMethod::NormalApproximation => "normal_approximation",
        };
        assert_eq!(method, case.method, "{context}");
        assert_eq!(test.u_old, case.u_old, "{context}");
        assert_close(test.p, case.p, &context);
        if !methods_seen.contains(&method) {
            methods_seen.push(method);
        }
    }
    assert_eq!(methods_seen.len(), 3, "fixture must exercise every method");
}

#[derive(Deserialize)]
struct SpecialCases {
    erfc: Vec<(f64, f64)>,
    normal_ppf: Vec<(f64, f64)>,
}

#[test]
fn special_functions_match_scipy() {
    let fixture: Fixture<SpecialCases> = read_json("special.json");
    for &(x, expected) in &fixture.cases.erfc {
        // The series/fraction switch and exp(−x²) cost a few ulps; far below 1e-9.
        assert_close(special::erfc(x), expected, &format!("erfc({x})"));
    }
    for &(p, expected) in &fixture.cases.normal_ppf {
        let actual = special::std_normal_inv_cdf(p);
        // Relative near the tails, absolute near the centre where Φ⁻¹ crosses 0.
        let tolerance = common::REL_TOL * expected.abs().max(1.0);
        assert!(
            (actual - expected).abs() <= tolerance,
            "ppf({p}): {actual} vs {expected}"
        );
    }
}
