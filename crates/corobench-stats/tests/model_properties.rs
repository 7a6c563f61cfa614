//! Property tests for the model fits and the ratio: any finite input gives a
//! result or an error, never a panic; a seed fixes every bootstrap; the ratio
//! behaves as a ratio should.

use corobench_stats::{
    StatsError, StepCapacity, StepOptions, bootstrap_usl, estimate_step_capacity, fit_usl,
    hodges_lehmann_ratio, ratio_ci,
};
use proptest::prelude::*;

/// Any finite value, from tiny to huge, of either sign.
fn any_finite() -> impl Strategy<Value = f64> {
    prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO
}

/// A positive value of any size, 10⁻³⁰⁰ to 10³⁰⁰, to reach overflow and underflow.
fn any_magnitude() -> impl Strategy<Value = f64> {
    (-300.0..300.0f64).prop_map(|exponent| 10f64.powf(exponent))
}

/// Points shaped like real measurements: concurrency 1..256, throughput up to 10⁶.
fn plausible_points() -> impl Strategy<Value = Vec<(f64, f64)>> {
    prop::collection::vec(((1u32..256).prop_map(f64::from), 0.0..1.0e6f64), 1..30)
}

fn positive_sample() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(1.0e-3..1.0e6f64, 1..20)
}

/// Large enough for a bounded 95 % ratio interval (4 values or more).
fn boundable_sample() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(1.0e-3..1.0e6f64, 4..20)
}

/// Trials at a handful of rates, so rates repeat as they do in a real search.
fn trials() -> impl Strategy<Value = Vec<(f64, bool)>> {
    let rates = [50.0, 100.0, 200.0, 400.0, 800.0];
    prop::collection::vec(
        ((0..rates.len()).prop_map(move |i| rates[i]), any::<bool>()),
        1..30,
    )
}

fn options(seed: u64) -> StepOptions {
    StepOptions {
        resamples: 100,
        seed,
        ..StepOptions::default()
    }
}

proptest! {
    #[test]
    fn usl_fit_never_panics(points in prop::collection::vec((any_finite(), any_finite()), 0..20)) {
        if let Ok(fit) = fit_usl(&points) {
            prop_assert!(fit.lambda > 0.0 && fit.sigma >= 0.0 && fit.kappa >= 0.0, "{fit:?}");
            prop_assert!(fit.residual_sum_of_squares >= 0.0, "{fit:?}");
        }
    }

    #[test]
    fn usl_fit_survives_extreme_magnitudes(
        points in prop::collection::vec((any_magnitude().prop_map(|n| n.max(1.0)), any_magnitude()), 3..15),
    ) {
        if let Ok(fit) = fit_usl(&points) {
            prop_assert!(fit.lambda > 0.0 && fit.sigma >= 0.0 && fit.kappa >= 0.0, "{fit:?}");
            prop_assert!(fit.residual_sum_of_squares.is_finite(), "{fit:?}");
        }
    }

    #[test]
    fn usl_fit_of_plausible_points_keeps_its_constraints(points in plausible_points()) {
        match fit_usl(&points) {
            Ok(fit) => {
                prop_assert!(fit.lambda > 0.0 && fit.sigma >= 0.0 && fit.kappa >= 0.0, "{fit:?}");
                prop_assert!(fit.residual_sum_of_squares.is_finite());
                if let Some(peak) = fit.peak {
                    prop_assert!(peak.concurrency >= 1.0 && peak.throughput > 0.0, "{peak:?}");
                }
            }
            // Random points may want a curve the law reaches only at infinite λ, σ and κ.
            Err(
                StatsError::TooFewDistinct { .. }
                | StatsError::DegenerateFit { .. }
                | StatsError::NoConvergence { .. },
            ) => {}
            Err(other) => prop_assert!(false, "unexpected error: {other}"),
        }
    }

    #[test]
    fn ratio_never_panics(
        a in prop::collection::vec(any_finite(), 0..12),
        b in prop::collection::vec(any_finite(), 0..12),
        confidence in any_finite(),
    ) {
        if let Ok(ci) = ratio_ci(&a, &b, confidence) {
            prop_assert!(ci.lo <= ci.estimate && ci.estimate <= ci.hi, "{ci:?}");
        }
        let _ = hodges_lehmann_ratio(&a, &b);
    }

    #[test]
    fn ratio_survives_extreme_magnitudes(
        a in prop::collection::vec(any_magnitude(), 1..12),
        b in prop::collection::vec(any_magnitude(), 1..12),
    ) {
        if let Ok(ci) = ratio_ci(&a, &b, 0.95) {
            prop_assert!(ci.lo <= ci.estimate && ci.estimate <= ci.hi, "{ci:?}");
        }
    }

    #[test]
    fn ratio_interval_holds_the_estimate(a in positive_sample(), b in positive_sample()) {
        match ratio_ci(&a, &b, 0.95) {
            Ok(ci) => {
                prop_assert!(ci.lo <= ci.estimate && ci.estimate <= ci.hi, "{ci:?}");
                prop_assert!(ci.confidence >= 0.95);
            }
            Err(StatsError::TooFewForInterval { min_each, .. }) => {
                prop_assert_eq!(min_each, Some(4));
                prop_assert!(a.len() < 4 || b.len() < 4);
            }
            Err(other) => prop_assert!(false, "unexpected error: {other}"),
        }
    }

    #[test]
    fn swapping_the_samples_inverts_the_ratio(a in boundable_sample(), b in boundable_sample()) {
        let forward = ratio_ci(&a, &b, 0.95).unwrap();
        let backward = ratio_ci(&b, &a, 0.95).unwrap();
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs();
        prop_assert!(close(forward.estimate * backward.estimate, 1.0));
        prop_assert!(close(forward.lo * backward.hi, 1.0));
        prop_assert!(close(forward.hi * backward.lo, 1.0));
    }

    #[test]
    fn scaling_one_sample_scales_the_ratio(
        a in boundable_sample(), b in boundable_sample(), factor in 1.0e-3..1.0e3f64,
    ) {
        let scaled: Vec<f64> = a.iter().map(|v| v * factor).collect();
        let plain = ratio_ci(&a, &b, 0.95).unwrap();
        let moved = ratio_ci(&scaled, &b, 0.95).unwrap();
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * y.abs();
        prop_assert!(close(moved.estimate, plain.estimate * factor));
        prop_assert!(close(moved.lo, plain.lo * factor) && close(moved.hi, plain.hi * factor));
    }

    #[test]
    fn capacity_never_panics(
        trials in prop::collection::vec((any_finite(), any::<bool>()), 0..20),
        confidence in any_finite(),
        seed in any::<u64>(),
    ) {
        let options = StepOptions { confidence, ..options(seed) };
        let _ = estimate_step_capacity(&trials, &options);
    }

    #[test]
    fn capacity_survives_extreme_rates(
        trials in prop::collection::vec((any_magnitude(), any::<bool>()), 1..20),
        seed in any::<u64>(),
    ) {
        if let Ok(StepCapacity::Located(ci)) = estimate_step_capacity(&trials, &options(seed)) {
            prop_assert!(ci.lo <= ci.hi && !ci.estimate.is_nan(), "{ci:?}");
        }
    }
}

proptest! {
    // Each case runs 100 fits; fewer cases keep the suite quick.
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn usl_bootstrap_is_fixed_by_its_seed(points in plausible_points(), seed in any::<u64>()) {
        let first = bootstrap_usl(&points, 0.95, 100, seed);
        prop_assert_eq!(first, bootstrap_usl(&points, 0.95, 100, seed));
    }

    #[test]
    fn usl_bootstrap_never_panics(
        points in prop::collection::vec((any_finite(), any_finite()), 0..12), seed in any::<u64>(),
    ) {
        if let Ok(boot) = bootstrap_usl(&points, 0.9, 100, seed) {
            prop_assert!(boot.kappa.lo <= boot.kappa.hi, "{boot:?}");
        }
    }

    #[test]
    fn capacity_is_fixed_by_its_seed(trials in trials(), seed in any::<u64>()) {
        let options = options(seed);
        let first = estimate_step_capacity(&trials, &options);
        prop_assert_eq!(&first, &estimate_step_capacity(&trials, &options));
        if let Ok(StepCapacity::Located(ci)) = first {
            prop_assert!(ci.lo <= ci.estimate && ci.estimate <= ci.hi && ci.lo >= 0.0, "{ci:?}");
        }
    }
}
