//! Intervals too wide to trust: one warning per metric and the scenarios
//! where it is wide, so that a view can keep the notes about what it
//! shows (req/s and p99 in the first look, every figure in the detailed
//! one); afterwards the warnings of metrics wide in exactly the same
//! scenarios are merged into one, naming every such metric.

use std::collections::BTreeMap;

use corobench_model::{Metric, MetricSummary, Warning, WarningKind};

use super::AnalyzeOptions;
use super::precision::relative_half_width;
use super::warnings::{Found, QUIET_THE_MACHINE, Warnings, percent};

/// Each metric of a scenario whose interval is wider than the bound (an
/// error rate aside: its median is mostly 0).
pub(crate) fn wide_intervals(
    metrics: &BTreeMap<Metric, MetricSummary>,
    options: &AnalyzeOptions,
) -> Vec<Found> {
    metrics
        .iter()
        .filter(|(metric, _)| **metric != Metric::ErrorRate)
        .filter(|(_, s)| relative_half_width(s).is_some_and(|w| w > options.wide_ci_fraction))
        .map(|(metric, _)| {
            Found::new(WarningKind::WideCi, message(&[*metric], options)).about(vec![*metric])
        })
        .collect()
}

/// `the 95% confidence interval of req/s is wider …`, or `intervals of
/// mean, p50 and CPU are wider …`.
fn message(metrics: &[Metric], options: &AnalyzeOptions) -> String {
    let labels: Vec<&str> = metrics.iter().map(|m| m.label()).collect();
    let (names, noun, verb, whose) = match labels.split_last() {
        Some((last, rest)) if !rest.is_empty() => (
            format!("{} and {last}", rest.join(", ")),
            "intervals",
            "are",
            "their",
        ),
        _ => (labels.join(""), "interval", "is", "the"),
    };
    format!(
        "the {} confidence {noun} of {names} {verb} wider than ±{} of {whose} median: the trials \
         disagree; {QUIET_THE_MACHINE}",
        percent(options.confidence),
        percent(options.wide_ci_fraction)
    )
}

/// Merges the wide-interval warnings of metrics that are wide in exactly
/// the same scenarios (with the same prefix) into the first of them;
/// returns where each old index went.
pub(crate) fn merge_alike(warnings: &mut Warnings, options: &AnalyzeOptions) -> Vec<usize> {
    let (list, prefixes) = warnings.parts_mut();
    let old: Vec<(Warning, String)> = list.drain(..).zip(prefixes.drain(..)).collect();
    let mut moved = Vec::with_capacity(old.len());
    for (warning, prefix) in old {
        let twin = mergeable(&warning).then(|| {
            list.iter()
                .zip(prefixes.iter())
                .position(|(w, p)| mergeable(w) && *p == prefix && same_rows(w, &warning))
        });
        if let Some(Some(index)) = twin {
            let into = &mut list[index];
            into.metrics.extend(warning.metrics);
            into.metrics.sort();
            into.message = format!("{prefix}{}", message(&into.metrics, options));
            moved.push(index);
        } else {
            moved.push(list.len());
            list.push(warning);
            prefixes.push(prefix);
        }
    }
    moved
}

/// A wide interval of a metric no first look shows: req/s, p99 and a
/// program's figures keep a note of their own.
fn mergeable(warning: &Warning) -> bool {
    warning.kind == WarningKind::WideCi
        && !warning.metrics.is_empty()
        && warning.details.is_empty()
        && warning.metrics.iter().all(|m| {
            !matches!(
                m,
                Metric::RequestsPerS | Metric::LatencyP99Us | Metric::Program(_)
            )
        })
}

fn same_rows(a: &Warning, b: &Warning) -> bool {
    let mut x = a.scenarios.clone();
    let mut y = b.scenarios.clone();
    x.sort();
    y.sort();
    x == y
}
