//! Sweeps: scenarios of one workload and target that differ in exactly one
//! dimension (a target parameter, the connections or the open-loop rate),
//! so a chart can draw each metric against that dimension.

use std::collections::{BTreeMap, BTreeSet};

use corobench_model::{ScenarioAnalysis, ScheduleKind, Sweep, SweepPoint, SweepSeries};

/// The dimension names used for the schedule.
pub(crate) const CONNECTIONS: &str = "connections";
pub(crate) const RATE: &str = "rate_per_s";

/// What a series holds fixed: the target and every other coordinate.
type SeriesKey = (String, Vec<Option<String>>);

/// Every sweep in the run: per workload, per dimension with several values.
pub(crate) fn find(scenarios: &[ScenarioAnalysis]) -> Vec<Sweep> {
    let mut workloads: Vec<&str> = Vec::new();
    // Idle workloads are fitted as memory per connection instead.
    for s in scenarios.iter().filter(|s| !s.scenario.workload.idle) {
        if !workloads.contains(&s.scenario.workload.name.as_str()) {
            workloads.push(&s.scenario.workload.name);
        }
    }
    let mut sweeps = Vec::new();
    for workload in workloads {
        let members: Vec<usize> = (0..scenarios.len())
            .filter(|&i| scenarios[i].scenario.workload.name == workload)
            .collect();
        for dimension in dimensions(scenarios, &members) {
            let series = series_along(scenarios, &members, &dimension);
            if !series.is_empty() {
                let numeric = series
                    .iter()
                    .flat_map(|s| &s.points)
                    .all(|p| p.x_value.is_some());
                sweeps.push(Sweep {
                    workload: workload.to_owned(),
                    dimension,
                    numeric,
                    series,
                });
            }
        }
    }
    sweeps
}

/// Parameter names (sorted), then the schedule's dimensions.
fn dimensions(scenarios: &[ScenarioAnalysis], members: &[usize]) -> Vec<String> {
    let names: BTreeSet<&String> = members
        .iter()
        .flat_map(|&i| scenarios[i].scenario.parameters.keys())
        .collect();
    names
        .into_iter()
        .cloned()
        .chain([CONNECTIONS.to_owned(), RATE.to_owned()])
        .collect()
}

/// A scenario's value in one dimension, as text.
fn coordinate(scenario: &ScenarioAnalysis, dimension: &str) -> Option<String> {
    let record = &scenario.scenario;
    match dimension {
        CONNECTIONS => Some(record.connections.to_string()),
        RATE => match record.schedule {
            ScheduleKind::Open { rate_per_s } => Some(rate_per_s.to_string()),
            ScheduleKind::Closed => None,
        },
        name => record.parameters.get(name).cloned(),
    }
}

/// Every coordinate except `dimension`: what a series holds fixed.
fn context(scenario: &ScenarioAnalysis, all: &[String], dimension: &str) -> Vec<Option<String>> {
    all.iter()
        .filter(|d| *d != dimension)
        .map(|d| coordinate(scenario, d))
        .collect()
}

fn series_along(
    scenarios: &[ScenarioAnalysis],
    members: &[usize],
    dimension: &str,
) -> Vec<SweepSeries> {
    let all = dimensions(scenarios, members);
    let mut groups: Vec<(SeriesKey, Vec<usize>)> = Vec::new();
    for &i in members {
        if coordinate(&scenarios[i], dimension).is_none() {
            continue;
        }
        let key = (
            scenarios[i].scenario.target.clone(),
            context(&scenarios[i], &all, dimension),
        );
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, indices)) => indices.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    let varying = varying_within_target(scenarios, members, &all);
    groups
        .into_iter()
        .filter(|(_, indices)| indices.len() > 1)
        .map(|((target, _), indices)| {
            let shown = varying.get(&target).cloned().unwrap_or_default();
            let label = series_label(&scenarios[indices[0]], &shown, dimension);
            SweepSeries {
                label,
                target,
                points: points(scenarios, &indices, dimension),
                scalability: None,
            }
        })
        .collect()
}

fn points(scenarios: &[ScenarioAnalysis], indices: &[usize], dimension: &str) -> Vec<SweepPoint> {
    let mut points: Vec<SweepPoint> = indices
        .iter()
        .filter_map(|&i| {
            let x = coordinate(&scenarios[i], dimension)?;
            Some(SweepPoint {
                x_value: x.parse::<f64>().ok().filter(|v| v.is_finite()),
                x,
                scenario: i,
            })
        })
        .collect();
    if points.iter().all(|p| p.x_value.is_some()) {
        points.sort_by(|a, b| {
            a.x_value
                .unwrap_or(0.0)
                .total_cmp(&b.x_value.unwrap_or(0.0))
        });
    }
    points
}

/// Per target, the dimensions with more than one value in this workload.
fn varying_within_target(
    scenarios: &[ScenarioAnalysis],
    members: &[usize],
    all: &[String],
) -> BTreeMap<String, Vec<String>> {
    let mut varying: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for &i in members {
        let target = &scenarios[i].scenario.target;
        if varying.contains_key(target) {
            continue;
        }
        let same_target: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&j| &scenarios[j].scenario.target == target)
            .collect();
        let dims = all
            .iter()
            .filter(|d| {
                let values: BTreeSet<Option<String>> = same_target
                    .iter()
                    .map(|&j| coordinate(&scenarios[j], d))
                    .collect();
                values.len() > 1
            })
            .cloned()
            .collect();
        varying.insert(target.clone(), dims);
    }
    varying
}

/// `go-ants queue_length=1000 c=64`: the target and the other dimensions
/// that vary for it, at this series' values.
fn series_label(scenario: &ScenarioAnalysis, shown: &[String], dimension: &str) -> String {
    let mut label = scenario.scenario.target.clone();
    for d in shown.iter().filter(|d| *d != dimension) {
        if let Some(value) = coordinate(scenario, d) {
            let name = match d.as_str() {
                CONNECTIONS => "c",
                RATE => "rate",
                other => other,
            };
            label.push_str(&format!(" {name}={value}"));
        }
    }
    label
}
