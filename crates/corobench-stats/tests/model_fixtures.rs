//! Checks the model fits against reference values computed with scipy and
//! statsmodels by `scripts/model_fixtures.py` (committed under `tests/fixtures`).

mod common;

use common::{assert_close, read_json};
use corobench_stats::{RatioIntervalMethod, StatsError, fit_usl, ratio_ci};
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixture<T> {
    cases: Vec<T>,
}

#[derive(Deserialize)]
struct UslCase {
    name: String,
    points: Vec<(f64, f64)>,
    lambda: f64,
    sigma: f64,
    kappa: f64,
    residual_sum_of_squares: f64,
}

/// Both programs stop at the same least-squares minimum, each by its own
/// convergence test: the residual sums of squares agree to rounding (worst
/// seen 5e-15 relative), hence the tight test on them, which also proves that
/// neither found a worse, local minimum. The sum is flat at the minimum (an
/// error ε in the parameters changes it by ε²), so a sum resolved to 1e-15
/// pins the parameters only to about 1e-8: λ is compared relatively (worst
/// seen 4e-9).
const USL_SSE_TOL: f64 = 1e-12;
const USL_LAMBDA_TOL: f64 = 1e-7;
/// σ and κ can sit on their bound 0, where a relative test means nothing
/// (`curve_fit` stays strictly inside, e.g. 1e-19, where we reach 0 exactly).
/// They are compared by what they do: their terms σ(N−1) and κN(N−1) in the
/// denominator at the largest N, absolutely (worst seen 3e-8).
const USL_TERM_TOL: f64 = 1e-7;

#[test]
fn usl_fits_match_scipy_curve_fit() {
    let fixture: Fixture<UslCase> = read_json("usl.json");
    for case in &fixture.cases {
        let fit = fit_usl(&case.points).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let n = fit.max_concurrency;
        let context = |what: &str| format!("{} {what}: {fit:?}", case.name);
        let relative = |got: f64, want: f64| (got - want).abs() / want.abs();
        assert!(
            relative(fit.lambda, case.lambda) <= USL_LAMBDA_TOL,
            "{}",
            context("λ")
        );
        let sigma_term = |sigma: f64| sigma * (n - 1.0);
        let kappa_term = |kappa: f64| kappa * n * (n - 1.0);
        let sigma_gap = (sigma_term(fit.sigma) - sigma_term(case.sigma)).abs();
        let kappa_gap = (kappa_term(fit.kappa) - kappa_term(case.kappa)).abs();
        assert!(
            sigma_gap <= USL_TERM_TOL,
            "{} gap {sigma_gap:e}",
            context("σ")
        );
        assert!(
            kappa_gap <= USL_TERM_TOL,
            "{} gap {kappa_gap:e}",
            context("κ")
        );
        // Never a worse minimum than scipy's, and not a different one.
        let sse_gap = relative(fit.residual_sum_of_squares, case.residual_sum_of_squares);
        assert!(sse_gap <= USL_SSE_TOL, "{} gap {sse_gap:e}", context("SSE"));
    }
    assert!(fixture.cases.len() >= 5);
}

#[derive(Deserialize)]
struct RatioCase {
    a: Vec<f64>,
    b: Vec<f64>,
    confidence: f64,
    estimate: f64,
    rank: usize,
    method: String,
    lo: Option<f64>,
    hi: Option<f64>,
    achieved: Option<f64>,
}

#[test]
fn ratio_intervals_match_brute_force() {
    let fixture: Fixture<RatioCase> = read_json("ratio.json");
    let mut methods_seen = std::collections::BTreeSet::new();
    for case in &fixture.cases {
        let context = format!(
            "{} vs {} at {}",
            case.a.len(),
            case.b.len(),
            case.confidence
        );
        let estimate = corobench_stats::hodges_lehmann_ratio(&case.a, &case.b).unwrap();
        assert_close(estimate, case.estimate, &context);
        methods_seen.insert(case.method.as_str());
        let result = ratio_ci(&case.a, &case.b, case.confidence);
        let (Some(lo), Some(hi), Some(achieved)) = (case.lo, case.hi, case.achieved) else {
            assert_eq!(case.rank, 0, "{context}");
            assert!(
                matches!(result, Err(StatsError::TooFewForInterval { .. })),
                "{context}"
            );
            continue;
        };
        let ci = result.unwrap_or_else(|e| panic!("{context}: {e}"));
        assert_eq!(ci.rank, case.rank, "{context}");
        let expected_method = match case.method.as_str() {
            "normal_approximation" => RatioIntervalMethod::NormalApproximation,
            _ => RatioIntervalMethod::ExactU,
        };
        assert_eq!(ci.method, expected_method, "{context}");
        assert_close(ci.estimate, case.estimate, &context);
        assert_close(ci.lo, lo, &context);
        assert_close(ci.hi, hi, &context);
        assert_close(ci.confidence, achieved, &context);
    }
    assert_eq!(
        methods_seen.len(),
        3,
        "every way of reaching the rank: {methods_seen:?}"
    );
}
