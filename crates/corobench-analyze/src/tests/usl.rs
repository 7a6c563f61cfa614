//! USL fits of concurrency sweeps whose throughput follows known
//! parameters, and the sweeps that cannot support one.

use corobench_model::{RunAnalysis, Scalability};

use crate::fixtures::RunBuilder;
use crate::{AnalyzeOptions, analyze_run};

/// X(N) = λN / (1 + σ(N − 1) + κN(N − 1)).
fn usl(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Four trials per concurrency, spread ±1 % around the curve.
fn swept(concurrencies: &[u32], curve: impl Fn(f64) -> f64) -> RunAnalysis {
    let mut run = RunBuilder::new("sweep", 4);
    for &c in concurrencies {
        let x = curve(f64::from(c));
        run = run.scenario("go-nethttp", &[], "plaintext", c).rates(&[
            x * 0.99,
            x * 0.997,
            x * 1.003,
            x * 1.01,
        ]);
    }
    analyze_run(&run.build(), &AnalyzeOptions::default()).unwrap()
}

fn scalability(analysis: &RunAnalysis) -> &Scalability {
    let sweep = analysis
        .sweeps
        .iter()
        .find(|s| s.dimension == "connections")
        .unwrap();
    sweep.series[0].scalability.as_ref().unwrap()
}

#[test]
fn a_retrograde_sweep_recovers_its_parameters_and_peak() {
    let (lambda, sigma, kappa) = (1000.0, 0.05, 0.001);
    let analysis = swept(&[1, 2, 4, 8, 16, 32, 64, 128], |n| {
        usl(lambda, sigma, kappa, n)
    });
    let fitted = scalability(&analysis);
    assert_eq!(fitted.points, 32);
    assert_eq!(fitted.note, None);
    let fit = fitted.fit.as_ref().unwrap();
    let covers = |value: &corobench_model::FittedValue, truth: f64| {
        value.lo.unwrap() <= truth && truth <= value.hi.unwrap()
    };
    assert!(covers(&fit.lambda, lambda), "{fit:#?}");
    assert!(covers(&fit.sigma, sigma), "{fit:#?}");
    assert!(covers(&fit.kappa, kappa), "{fit:#?}");
    let peak_n = ((1.0 - sigma) / kappa).sqrt();
    assert!(covers(fit.peak_concurrency.as_ref().unwrap(), peak_n));
    let peak_x = usl(lambda, sigma, kappa, peak_n);
    assert!(covers(fit.peak_throughput.as_ref().unwrap(), peak_x));
    assert!(!fit.kappa_indistinguishable_from_zero);
    assert!((fit.throughput_at(8.0) - usl(lambda, sigma, kappa, 8.0)).abs() < 0.02 * 5000.0);
}

#[test]
fn a_sweep_without_a_peak_says_so() {
    let analysis = swept(&[1, 2, 4, 8, 16], |n| usl(1000.0, 0.1, 0.0, n));
    let fitted = scalability(&analysis);
    let fit = fitted.fit.as_ref().unwrap();
    assert!(fit.kappa_indistinguishable_from_zero);
    assert_eq!(
        fitted.note.as_deref(),
        Some("κ indistinguishable from 0: no retrograde region in the measured range")
    );
    let sigma = &fit.sigma;
    assert!(
        sigma.lo.unwrap() <= 0.1 && 0.1 <= sigma.hi.unwrap(),
        "{sigma:?}"
    );
}

#[test]
fn a_sweep_of_two_concurrencies_is_too_short_to_fit() {
    let analysis = swept(&[8, 32], |n| 100.0 * n);
    let fitted = scalability(&analysis);
    assert!(fitted.fit.is_none());
    assert_eq!(
        fitted.note.as_deref(),
        Some("too few points: 2 concurrencies measured, a fit needs 3")
    );
}

#[test]
fn sweeps_of_other_dimensions_get_no_fit() {
    let run = RunBuilder::new("sweep", 4)
        .scenario("t", &["body=small"], "plaintext", 4)
        .rates(&[100.0, 101.0, 102.0, 103.0])
        .scenario("t", &["body=large"], "plaintext", 4)
        .rates(&[50.0, 51.0, 52.0, 53.0])
        .build();
    let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
    assert_eq!(analysis.sweeps.len(), 1);
    assert!(analysis.sweeps[0].series[0].scalability.is_none());
}
