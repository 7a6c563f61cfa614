//! One scenario at a time: trial values, medians with confidence intervals,
//! the merged latency histogram and a label a person can read.

use std::collections::{BTreeMap, BTreeSet};

use corobench_model::StoredRun;
use corobench_model::{
    CpuSplit, ErrorCounts, LatencyHistogram, MergedLatency, Metric, MetricSummary, PercentileValue,
    ScenarioAnalysis, ScenarioRecord, TrialAnalysis, TrialRecord, TrialStatus,
};
use corobench_stats::{format_pct_range, max, median_ci, min, min_samples_for_median_ci};

use super::AnalyzeOptions;
use super::warnings::{ScenarioFacts, Warnings, scenario_warnings};

/// The spectrum runs from 50% (one nine: log10(2)) to 99.999% (five nines)
/// in steps of a tenth of a nine, as far as the sample resolves.
const SPECTRUM_STEPS_PER_NINE: u32 = 10;
const SPECTRUM_MAX_NINES: f64 = 5.0;

/// Analyses every scenario of `run`, in plan order. `prefix` starts every
/// warning message (it names the run when two runs are compared).
pub(crate) fn analyze_all(
    run: &StoredRun,
    options: &AnalyzeOptions,
    warnings: &mut Warnings,
    prefix: &str,
) -> Vec<ScenarioAnalysis> {
    let varying = varying_parameters(&run.scenarios);
    run.scenarios
        .iter()
        .map(|scenario| {
            let mut trials: Vec<&TrialRecord> = run
                .trials
                .iter()
                .filter(|t| t.scenario_index == scenario.index)
                .collect();
            trials.sort_by_key(|t| t.trial_index);
            let label = label(scenario, varying.get(&scenario.target));
            let input = ScenarioInput {
                scenario,
                trials: &trials,
                trials_planned: run.trials_per_scenario,
                label,
                prefix,
            };
            analyze(&input, options, warnings)
        })
        .collect()
}

struct ScenarioInput<'a> {
    scenario: &'a ScenarioRecord,
    trials: &'a [&'a TrialRecord],
    trials_planned: u32,
    label: String,
    prefix: &'a str,
}

fn analyze(
    input: &ScenarioInput<'_>,
    options: &AnalyzeOptions,
    warnings: &mut Warnings,
) -> ScenarioAnalysis {
    let ok: Vec<&TrialRecord> = input
        .trials
        .iter()
        .copied()
        .filter(|t| t.status == TrialStatus::Ok)
        .collect();
    let split = CpuSplit::of(&ok);
    let trials: Vec<TrialAnalysis> = input.trials.iter().map(|t| trial(t, split)).collect();
    let metrics = summaries(&trials, options.confidence);
    let facts = ScenarioFacts {
        scenario: input.scenario,
        trials: input.trials,
        trials_planned: input.trials_planned,
        ok: ok.len(),
        metrics: &metrics,
        prefix: input.prefix,
    };
    let warning_indices = scenario_warnings(&facts, options, warnings);
    let mut errors = ErrorCounts::default();
    for load in ok.iter().filter_map(|t| t.load.as_ref()) {
        errors.add(&load.errors);
    }
    ScenarioAnalysis {
        scenario: input.scenario.clone(),
        label: input.label.clone(),
        trials_planned: input.trials_planned,
        trials_ok: count(ok.len()),
        trials_failed: count(input.trials.len() - ok.len()),
        latency: merged_latency(&ok),
        representative_trial: representative(&trials, &metrics),
        metrics,
        errors,
        trials,
        warnings: warning_indices,
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A trial's values (only finite ones: a value that is not a number cannot
/// be ranked), with the server's CPU figures its scenario's `split` shows.
fn trial(record: &TrialRecord, split: CpuSplit) -> TrialAnalysis {
    let values = Metric::ALL
        .into_iter()
        .chain(Metric::of_program(record))
        .chain(Metric::of_tls(record))
        .chain([Metric::SERVER_CPU])
        .filter(|m| split.shows(*m))
        .filter_map(|m| m.value(record).filter(|v| v.is_finite()).map(|v| (m, v)))
        .collect();
    TrialAnalysis {
        trial_index: record.trial_index,
        sequence: record.sequence,
        status: record.status,
        failure: record.failure.clone(),
        started_at_unix_ms: record.started_at_unix_ms,
        values,
        flags: record.flags.clone(),
        load_warnings: record
            .load
            .as_ref()
            .map(|l| l.warnings.clone())
            .unwrap_or_default(),
        resource_series: record.resource_series.clone(),
        probe: record.probe,
    }
}

/// The values of `metric` over the trials that have one, in trial order.
pub(crate) fn values_of(trials: &[TrialAnalysis], metric: Metric) -> Vec<f64> {
    trials
        .iter()
        .filter_map(|t| t.values.get(&metric).copied())
        .collect()
}

fn summaries(trials: &[TrialAnalysis], confidence: f64) -> BTreeMap<Metric, MetricSummary> {
    let measured: BTreeSet<Metric> = trials
        .iter()
        .flat_map(|t| t.values.keys().copied())
        .collect();
    measured
        .into_iter()
        .filter_map(|m| summarize(&values_of(trials, m), confidence).map(|s| (m, s)))
        .collect()
}

/// The median with its order-statistic interval; `None` for no values.
pub(crate) fn summarize(values: &[f64], confidence: f64) -> Option<MetricSummary> {
    let ci = median_ci(values, confidence).ok()?;
    let bound = |x: f64| x.is_finite().then_some(x);
    // An interval too few trials leave open is said as the count it needs
    // (`n<6`), not as a spread of ∞.
    let ci_text = if ci.lo.is_finite() && ci.hi.is_finite() {
        format_pct_range(ci.estimate, ci.lo, ci.hi)
    } else {
        min_samples_for_median_ci(confidence)
            .ok()
            .flatten()
            .map_or_else(|| "∞".to_owned(), |needed| format!("n<{needed}"))
    };
    Some(MetricSummary {
        n: ci.n,
        median: ci.estimate,
        ci_lo: bound(ci.lo),
        ci_hi: bound(ci.hi),
        ci_confidence: ci.confidence,
        ci_text,
        min: min(values).ok()?,
        max: max(values).ok()?,
    })
}

/// The `ok` trial whose req/s is nearest the median (the earliest on a tie).
fn representative(
    trials: &[TrialAnalysis],
    metrics: &BTreeMap<Metric, MetricSummary>,
) -> Option<u32> {
    let median = metrics.get(&Metric::RequestsPerS)?.median;
    trials
        .iter()
        .filter_map(|t| {
            let rate = t.values.get(&Metric::RequestsPerS)?;
            Some(((rate - median).abs(), t.trial_index))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
        .map(|(_, index)| index)
}

/// Every `ok` trial's latency histogram added together (exact: HDR merge).
fn merged_latency(ok: &[&TrialRecord]) -> Option<MergedLatency> {
    let loads: Vec<_> = ok.iter().filter_map(|t| t.load.as_ref()).collect();
    let mut merged = LatencyHistogram::new();
    for load in &loads {
        merged.add(&load.latency.histogram);
    }
    if merged.count() == 0 {
        return None;
    }
    let uncorrected = loads
        .iter()
        .filter_map(|l| l.latency_uncorrected.as_ref())
        .fold(None::<LatencyHistogram>, |acc, report| {
            let mut h = acc.unwrap_or_default();
            h.add(&report.histogram);
            Some(h)
        });
    Some(MergedLatency {
        trials: loads.len(),
        summary: merged.summary(),
        spectrum: spectrum(&merged),
        spectrum_uncorrected: uncorrected.filter(|h| h.count() > 0).map(|h| spectrum(&h)),
        histogram: merged,
    })
}

/// Latency at 50%, then every tenth of a "nine" up to 99.999%, stopping
/// where the sample is too small to resolve the percentile (1/(1 − p) > count).
fn spectrum(histogram: &LatencyHistogram) -> Vec<PercentileValue> {
    let count = histogram.count() as f64;
    let first_step = (2f64.log10() * f64::from(SPECTRUM_STEPS_PER_NINE)).ceil() as u32;
    let last_step = (SPECTRUM_MAX_NINES * f64::from(SPECTRUM_STEPS_PER_NINE)) as u32;
    let mut points = vec![PercentileValue {
        percentile: 50.0,
        latency_us: histogram.value_at_percentile_us(50.0),
    }];
    for step in first_step..=last_step {
        let nines = f64::from(step) / f64::from(SPECTRUM_STEPS_PER_NINE);
        if 10f64.powf(nines) > count {
            break;
        }
        let percentile = 100.0 * (1.0 - 10f64.powf(-nines));
        points.push(PercentileValue {
            percentile,
            latency_us: histogram.value_at_percentile_us(percentile),
        });
    }
    points
}

/// Per target, the parameters whose value differs between its scenarios.
pub(crate) fn varying_parameters(
    scenarios: &[ScenarioRecord],
) -> BTreeMap<String, BTreeSet<String>> {
    let mut values: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for s in scenarios {
        for (name, value) in &s.parameters {
            values
                .entry((s.target.as_str(), name.as_str()))
                .or_default()
                .insert(value.as_str());
        }
    }
    let mut varying: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for ((target, name), seen) in values {
        let entry = varying.entry(target.to_owned()).or_default();
        if seen.len() > 1 {
            entry.insert(name.to_owned());
        }
    }
    varying
}

/// `go-ants pool_size=64 queue_length=1000`: the target and the parameters
/// in `shown` (in the scenario's order).
pub(crate) fn label(scenario: &ScenarioRecord, shown: Option<&BTreeSet<String>>) -> String {
    let mut label = scenario.target.clone();
    for (name, value) in &scenario.parameters {
        if shown.is_some_and(|names| names.contains(name)) {
            label.push_str(&format!(" {name}={value}"));
        }
    }
    label
}
