//! Comparisons within a run: every scenario of another target against the
//! baseline target's scenario with the same workload and schedule (and the
//! same values of the parameters both targets have).

use corobench_model::{
    Better, ChangeEstimator, Metric, MetricComparison, MetricSummary, ScenarioAnalysis,
    ScenarioComparison, Verdict, WarningKind,
};
use corobench_model::{ScenarioRecord, StoredRun};
use corobench_stats::{format_p_and_n, mann_whitney_u_test};

use super::change::{Change, Estimator};
use super::scenarios::values_of;
use super::warnings::{Warnings, too_few_to_detect};
use super::{AnalyzeError, AnalyzeOptions};

/// The baseline target: the one asked for (which must be in the run), else
/// the one the run stored (its spec's or its `--baseline`), else the target
/// of the first scenario; `None` for a run without scenarios.
pub(crate) fn choose_target(
    run: &StoredRun,
    asked: Option<&str>,
) -> Result<Option<String>, AnalyzeError> {
    let mut targets: Vec<String> = Vec::new();
    for s in &run.scenarios {
        if !targets.contains(&s.target) {
            targets.push(s.target.clone());
        }
    }
    let stored = run
        .run
        .baseline
        .as_ref()
        .filter(|name| targets.contains(name));
    match asked {
        None => Ok(stored.or(targets.first()).cloned()),
        Some(name) if targets.iter().any(|t| t == name) => Ok(Some(name.to_owned())),
        Some(name) => Err(AnalyzeError::UnknownBaseline {
            name: name.to_owned(),
            run_id: run.run.id.clone(),
            targets,
        }),
    }
}

/// Compares every scenario of another target with its baseline scenario(s)
/// and records the warnings this raises on the scenarios.
pub(crate) fn compare_with(
    scenarios: &mut [ScenarioAnalysis],
    baseline_target: &str,
    options: &AnalyzeOptions,
    warnings: &mut Warnings,
) -> Vec<ScenarioComparison> {
    let mut comparisons = Vec::new();
    for index in 0..scenarios.len() {
        if scenarios[index].scenario.target == baseline_target {
            continue;
        }
        let matches: Vec<usize> = (0..scenarios.len())
            .filter(|&b| scenarios[b].scenario.target == baseline_target)
            .filter(|&b| same_conditions(&scenarios[b], &scenarios[index]))
            .collect();
        if matches.is_empty() && scenarios[index].trials_ok > 0 {
            let message = format!(
                "no {baseline_target} scenario with the same workload, schedule and shared \
                 parameters to compare with; add one to the spec, or pick another --baseline"
            );
            let key = scenarios[index].scenario.key.clone();
            let w = warnings.add(WarningKind::NoBaseline, message, Some(key.as_str()));
            push_unique(&mut scenarios[index].warnings, w);
        }
        for baseline in matches {
            let comparison = compare_scenarios(scenarios, baseline, index, options, warnings);
            comparisons.push(comparison);
        }
    }
    comparisons.extend(sweep_within(scenarios, baseline_target, options, warnings));
    comparisons
}

/// What a protocol costs each target: every scenario over TLS or HTTP/2
/// against the same target's cleartext HTTP/1.1 scenario under the same
/// conditions, and one with full handshakes against the same with
/// sessions resumed; and one with a background request (a slow stream
/// beside the measured ones) against the same without it. Every target
/// gets these, the baseline or not: the ratio within one server is the
/// figure (TLS costs Go x% of its req/s; a slow stream multiplies Node's
/// p99 by y).
pub(crate) fn protocol_variants(
    scenarios: &mut [ScenarioAnalysis],
    options: &AnalyzeOptions,
    warnings: &mut Warnings,
) -> Vec<ScenarioComparison> {
    let pairs: Vec<(usize, usize)> = (0..scenarios.len())
        .filter_map(|index| {
            let base = (0..scenarios.len()).find(|&b| {
                is_protocol_base(&scenarios[b], &scenarios[index])
                    || is_background_base(&scenarios[b], &scenarios[index])
            })?;
            Some((base, index))
        })
        .collect();
    pairs
        .into_iter()
        .map(|(base, index)| compare_scenarios(scenarios, base, index, options, warnings))
        .collect()
}

/// Whether `base` is `variant` but for the protocol (cleartext HTTP/1.1,
/// or sessions resumed where `variant` pays full handshakes). The request
/// is matched, not the workload's name: a suite gives each protocol a
/// workload of its own where the protocol's keys cannot be swept (a
/// resumed and a full-handshake workload of the same request).
fn is_protocol_base(base: &ScenarioAnalysis, variant: &ScenarioAnalysis) -> bool {
    let (b, v) = (&base.scenario, &variant.scenario);
    let same_request = same_request(b, v) && b.workload.background == v.workload.background;
    let same_place = b.target == v.target
        && b.parameters == v.parameters
        && b.program.is_none()
        && v.program.is_none()
        && same_request
        && b.schedule == v.schedule
        && b.connections == v.connections
        && b.wire.keepalive == v.wire.keepalive
        && b.wire.pipeline == v.wire.pipeline;
    if !same_place {
        return false;
    }
    if !v.wire.tls_resume {
        return b.protocol == v.protocol && b.wire.streams == v.wire.streams && b.wire.tls_resume;
    }
    !v.protocol.is_http1() && b.protocol.is_http1() && b.wire.streams == 1
}

/// The same request (the workload's name aside).
fn same_request(b: &ScenarioRecord, v: &ScenarioRecord) -> bool {
    b.workload.method == v.workload.method
        && b.workload.path == v.workload.path
        && b.workload.body_bytes == v.workload.body_bytes
        && b.workload.idle == v.workload.idle
}

/// Whether `base` is `variant` without its background request: the same
/// target, request, schedule, wire and protocol with nothing beside it, so
/// that the comparison is what a slow stream on the same connection does
/// to the measured ones (head-of-line blocking).
fn is_background_base(base: &ScenarioAnalysis, variant: &ScenarioAnalysis) -> bool {
    let (b, v) = (&base.scenario, &variant.scenario);
    v.workload.background.is_some()
        && b.workload.background.is_none()
        && b.target == v.target
        && b.parameters == v.parameters
        && b.program.is_none()
        && same_request(b, v)
        && b.schedule == v.schedule
        && b.connections == v.connections
        && b.wire == v.wire
        && b.protocol == v.protocol
}

/// The baseline target's own sweeps: each scenario of it against the first
/// of its scenarios with the same workload, schedule and connections and
/// other parameter values (GOMAXPROCS 2 against 1). A program's runs with
/// other parameters are compared with its first run (fresh against pooled
/// connections, pool sizes): a program sweep is usually compared within the
/// one target.
fn sweep_within(
    scenarios: &mut [ScenarioAnalysis],
    baseline_target: &str,
    options: &AnalyzeOptions,
    warnings: &mut Warnings,
) -> Vec<ScenarioComparison> {
    let own: Vec<usize> = (0..scenarios.len())
        .filter(|&i| scenarios[i].scenario.target == baseline_target)
        .filter(|&i| scenarios[i].scenario.program.is_none())
        .collect();
    let pairs: Vec<(usize, usize)> = own
        .iter()
        .filter_map(|&index| {
            let first = own
                .iter()
                .copied()
                .find(|&b| b < index && same_setting(&scenarios[b], &scenarios[index]))?;
            Some((first, index))
        })
        .collect();
    let mut comparisons: Vec<ScenarioComparison> = pairs
        .into_iter()
        .map(|(first, index)| compare_scenarios(scenarios, first, index, options, warnings))
        .collect();
    comparisons.extend(program_variants(
        scenarios,
        baseline_target,
        options,
        warnings,
    ));
    comparisons
}

/// Same workload, schedule, connections, wire and protocol, whatever the
/// parameters.
fn same_setting(a: &ScenarioAnalysis, b: &ScenarioAnalysis) -> bool {
    let (a, b) = (&a.scenario, &b.scenario);
    a.workload.name == b.workload.name
        && a.schedule == b.schedule
        && a.connections == b.connections
        && a.wire == b.wire
        && a.protocol == b.protocol
}

/// A program target's runs with other parameters against its first one.
fn program_variants(
    scenarios: &mut [ScenarioAnalysis],
    baseline_target: &str,
    options: &AnalyzeOptions,
    warnings: &mut Warnings,
) -> Vec<ScenarioComparison> {
    let runs: Vec<usize> = (0..scenarios.len())
        .filter(|&i| scenarios[i].scenario.target == baseline_target)
        .filter(|&i| scenarios[i].scenario.program.is_some())
        .collect();
    let Some((&first, rest)) = runs.split_first() else {
        return Vec::new();
    };
    rest.iter()
        .map(|&index| compare_scenarios(scenarios, first, index, options, warnings))
        .collect()
}

fn compare_scenarios(
    scenarios: &mut [ScenarioAnalysis],
    baseline: usize,
    index: usize,
    options: &AnalyzeOptions,
    warnings: &mut Warnings,
) -> ScenarioComparison {
    let (old, new) = (&scenarios[baseline], &scenarios[index]);
    let metrics: Vec<MetricComparison> = old
        .metrics
        .keys()
        .copied()
        .filter_map(|metric| {
            let old_summary = old.metrics.get(&metric)?;
            let new_summary = new.metrics.get(&metric)?;
            let old_values = values_of(&old.trials, metric);
            let new_values = values_of(&new.trials, metric);
            let sides = Sides {
                old: (old_summary, &old_values),
                new: (new_summary, &new_values),
            };
            Some(compare_metric(metric, &sides, options))
        })
        .collect();
    let sizes = metrics
        .iter()
        .find(|m| m.metric == Metric::RequestsPerS)
        .map(|m| (m.n_baseline, m.n));
    if let Some(found) = sizes.and_then(|(a, b)| too_few_to_detect(a, b, options)) {
        let key = scenarios[index].scenario.key.clone();
        let w = warnings.add_found(found, Some(key.as_str()));
        push_unique(&mut scenarios[index].warnings, w);
    }
    ScenarioComparison {
        scenario: index,
        baseline,
        metrics,
    }
}

fn push_unique(indices: &mut Vec<usize>, index: usize) {
    if !indices.contains(&index) {
        indices.push(index);
    }
}

/// Same workload, schedule, connections, wire and protocol, and equal
/// values of every parameter both scenarios have.
fn same_conditions(a: &ScenarioAnalysis, b: &ScenarioAnalysis) -> bool {
    let (a, b) = (&a.scenario, &b.scenario);
    a.workload.name == b.workload.name
        && a.schedule == b.schedule
        && a.connections == b.connections
        && a.wire == b.wire
        && a.protocol == b.protocol
        && a.parameters
            .iter()
            .all(|(name, value)| b.parameters.get(name).is_none_or(|other| other == value))
}

/// The two sides of one metric's comparison: summary and trial values.
pub(crate) struct Sides<'a> {
    pub(crate) old: (&'a MetricSummary, &'a [f64]),
    pub(crate) new: (&'a MetricSummary, &'a [f64]),
}

/// One metric of two samples compared: medians, a two-sided U test, and
/// the one change estimate with its interval ([`Change`]); `~` when
/// p > alpha.
pub(crate) fn compare_metric(
    metric: Metric,
    sides: &Sides<'_>,
    options: &AnalyzeOptions,
) -> MetricComparison {
    let ((old, old_values), (new, new_values)) = (sides.old, sides.new);
    // Identical samples (every value equal) have no ranks to compare:
    // benchstat reports them as p = 1, no evidence of a difference. The
    // samples are non-empty and finite here, so no other error can occur.
    let p_value = mann_whitney_u_test(old_values, new_values).map_or(1.0, |test| test.p);
    let significant = p_value <= options.alpha;
    let change = Change::of(
        old_values,
        new_values,
        (old.median, new.median),
        options.confidence,
    );
    MetricComparison {
        metric,
        baseline: old.median,
        value: new.median,
        ratio: change.ratio,
        ratio_lo: change.interval.map(|(lo, _)| lo),
        ratio_hi: change.interval.map(|(_, hi)| hi),
        ratio_confidence: change.confidence,
        estimator: match change.estimator {
            Estimator::HodgesLehmann => ChangeEstimator::HodgesLehmann,
            Estimator::MedianRatio => ChangeEstimator::MedianRatio,
        },
        p_value,
        n_baseline: old_values.len(),
        n: new_values.len(),
        significant,
        verdict: verdict(metric, change.ratio, old.median, significant),
        change_text: change.text(),
        delta_text: change.cell(p_value, options.alpha),
        note_text: format_p_and_n(p_value, old_values.len(), new_values.len()),
    }
}

/// Improved or regressed by the direction of the change estimate.
fn verdict(metric: Metric, ratio: Option<f64>, old: f64, significant: bool) -> Verdict {
    match ratio {
        _ if !significant => Verdict::NoDifference,
        None if old == 0.0 => Verdict::Undefined,
        None => Verdict::NoDifference,
        Some(1.0) => Verdict::NoDifference,
        Some(r) if (r > 1.0) == (metric.better() == Better::Higher) => Verdict::Improved,
        Some(_) => Verdict::Regressed,
    }
}
