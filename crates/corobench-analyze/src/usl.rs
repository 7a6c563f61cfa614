//! The Universal Scalability Law fitted to sweeps over a concurrency: the
//! connections, or a target parameter that sets how much runs at once
//! (a pool size, a number of workers). Each series gets λ, σ, κ and its
//! peak with bootstrap intervals, or the reason the data support no fit.

use corobench_model::{
    FittedValue, Metric, Scalability, ScenarioAnalysis, ScheduleKind, Sweep, SweepSeries,
    UslEstimates,
};
use corobench_stats::{Interval, UslBootstrap, bootstrap_usl};

use super::scenarios::values_of;
use super::sweeps::CONNECTIONS;

/// Bootstrap resamples per series: enough for stable 95 % percentile
/// bounds, few enough that a report of many sweeps stays quick.
const RESAMPLES: usize = 1000;

/// Fixed, so a report of the same run shows the same intervals every time.
const SEED: u64 = 0x5EED_0F05_CA1E;

/// Parameter names that set a concurrency: `pool_size`, `workers`,
/// `threads`, `max_connections`, `concurrency`, `parallelism`.
const CONCURRENCY_WORDS: [&str; 6] = [
    "pool",
    "worker",
    "thread",
    "connection",
    "concurren",
    "parallel",
];

/// Fits every series of every sweep over a concurrency.
pub(crate) fn fit_sweeps(sweeps: &mut [Sweep], scenarios: &[ScenarioAnalysis], confidence: f64) {
    for sweep in sweeps.iter_mut().filter(|s| is_concurrency(&s.dimension)) {
        // An open loop's throughput is the rate it was offered, not what
        // the concurrency allows: only closed loops and programs are fitted.
        for series in &mut sweep.series {
            let closed = series.points.iter().all(|p| {
                let record = &scenarios[p.scenario].scenario;
                record.program.is_some() || record.schedule == ScheduleKind::Closed
            });
            if closed {
                series.scalability = Some(fit_series(series, scenarios, confidence));
            }
        }
    }
}

/// Whether a dimension counts clients or workers running at once.
fn is_concurrency(dimension: &str) -> bool {
    let name = dimension.to_ascii_lowercase();
    dimension == CONNECTIONS || CONCURRENCY_WORDS.iter().any(|word| name.contains(word))
}

/// The throughput a series is fitted on: req/s, or a program's first rate.
fn throughput_metric(scenario: &ScenarioAnalysis) -> Option<Metric> {
    if scenario.scenario.program.is_none() {
        return Some(Metric::RequestsPerS);
    }
    scenario.trials.iter().find_map(|trial| {
        trial
            .values
            .keys()
            .copied()
            .find(|m| matches!(m, Metric::Program(unit) if unit.as_str().ends_with("/s")))
    })
}

fn fit_series(
    series: &SweepSeries,
    scenarios: &[ScenarioAnalysis],
    confidence: f64,
) -> Scalability {
    let metric = series
        .points
        .first()
        .and_then(|p| throughput_metric(&scenarios[p.scenario]))
        .unwrap_or(Metric::RequestsPerS);
    let points: Vec<(f64, f64)> = series
        .points
        .iter()
        .filter_map(|p| Some((p.x_value?, &scenarios[p.scenario])))
        .flat_map(|(n, s)| {
            values_of(&s.trials, metric)
                .into_iter()
                .map(move |x| (n, x))
        })
        .collect();
    let levels = series.points.iter().filter(|p| p.x_value.is_some()).count();
    let unfitted = |note: String| Scalability {
        metric,
        points: points.len(),
        fit: None,
        note: Some(note),
    };
    if levels < corobench_stats::usl::MIN_DISTINCT_CONCURRENCIES {
        return unfitted(format!(
            "too few points: {levels} concurrencies measured, a fit needs {}",
            corobench_stats::usl::MIN_DISTINCT_CONCURRENCIES
        ));
    }
    match bootstrap_usl(&points, confidence, RESAMPLES, SEED) {
        Err(error) => unfitted(format!("no fit: {error}")),
        Ok(bootstrap) => Scalability {
            metric,
            points: points.len(),
            note: bootstrap.kappa_indistinguishable_from_zero.then(|| {
                "κ indistinguishable from 0: no retrograde region in the measured range".to_owned()
            }),
            fit: Some(estimates(&bootstrap)),
        },
    }
}

fn estimates(bootstrap: &UslBootstrap) -> UslEstimates {
    let fit = &bootstrap.fit;
    let peak_throughput = fit.max_throughput();
    UslEstimates {
        lambda: fitted(fit.lambda, bootstrap.lambda),
        sigma: fitted(fit.sigma, bootstrap.sigma),
        kappa: fitted(fit.kappa, bootstrap.kappa),
        peak_concurrency: fit
            .peak
            .map(|peak| fitted(peak.concurrency, bootstrap.peak_concurrency)),
        peak_throughput: peak_throughput
            .is_finite()
            .then(|| fitted(peak_throughput, bootstrap.peak_throughput)),
        kappa_indistinguishable_from_zero: bootstrap.kappa_indistinguishable_from_zero,
        confidence: bootstrap.confidence,
        resamples: bootstrap.resamples,
    }
}

/// An estimate with its interval; an infinite bound is stored as `None`.
fn fitted(estimate: f64, interval: Interval) -> FittedValue {
    let bound = |v: f64| v.is_finite().then_some(v);
    FittedValue {
        estimate,
        lo: bound(interval.lo),
        hi: bound(interval.hi),
    }
}
