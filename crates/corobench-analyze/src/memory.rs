//! Memory per connection: for each target (with its parameters) and idle
//! workload, the least-squares slope of settled RSS against the number of
//! idle connections over every successful trial of the sweep, with the
//! slope's t interval (docs/methodology.md, "Memory per connection").

use std::collections::BTreeMap;

use corobench_model::{MemoryPerConnection, ScenarioAnalysis, StoredRun, TrialRecord, TrialStatus};
use corobench_stats::{fit_line, fit_line_interval};

/// One fit per target label, idle workload and protocol, in plan order.
/// Connections held over TLS are fitted apart from cleartext ones (each
/// holds a session), and their label says so (`kit tls=true`).
pub(crate) fn memory_per_connection(
    run: &StoredRun,
    scenarios: &[ScenarioAnalysis],
    confidence: f64,
) -> Vec<MemoryPerConnection> {
    let mut groups: BTreeMap<(u32, String, &str), Vec<&ScenarioAnalysis>> = BTreeMap::new();
    let mut first_index: BTreeMap<(String, &str), u32> = BTreeMap::new();
    for scenario in scenarios {
        let idle = run
            .trials
            .iter()
            .any(|t| t.scenario_index == scenario.scenario.index && t.idle.is_some());
        if !idle {
            continue;
        }
        let name = (
            label_with_protocol(scenario),
            scenario.scenario.workload.name.as_str(),
        );
        let first = *first_index
            .entry(name.clone())
            .or_insert(scenario.scenario.index);
        groups
            .entry((first, name.0, name.1))
            .or_default()
            .push(scenario);
    }
    groups
        .into_iter()
        .map(|((_, label, workload), members)| {
            fit_group(run, &label, workload, &members, confidence)
        })
        .collect()
}

/// The scenario's label, with `tls=true` when its connections spoke TLS.
fn label_with_protocol(scenario: &ScenarioAnalysis) -> String {
    if scenario.scenario.protocol.tls {
        format!("{} tls=true", scenario.label)
    } else {
        scenario.label.clone()
    }
}

fn fit_group(
    run: &StoredRun,
    label: &str,
    workload: &str,
    members: &[&ScenarioAnalysis],
    confidence: f64,
) -> MemoryPerConnection {
    let indices: Vec<u32> = members.iter().map(|s| s.scenario.index).collect();
    let measured: Vec<&TrialRecord> = run
        .trials
        .iter()
        .filter(|t| indices.contains(&t.scenario_index) && t.status == TrialStatus::Ok)
        .filter(|t| t.idle.is_some())
        .collect();
    let points: Vec<(f64, f64)> = measured
        .iter()
        .filter_map(|t| t.idle)
        .map(|m| (f64::from(m.connections), m.rss_bytes as f64))
        .collect();
    let mut connections: Vec<u32> = measured
        .iter()
        .filter_map(|t| t.idle)
        .map(|m| m.connections)
        .collect();
    connections.sort_unstable();
    connections.dedup();
    let unsettled = measured
        .iter()
        .filter(|t| t.idle.is_some_and(|m| !m.settled))
        .count();
    let mut fit = MemoryPerConnection {
        label: label.to_owned(),
        workload: workload.to_owned(),
        scenarios: indices,
        connections,
        trials: u32::try_from(points.len()).unwrap_or(u32::MAX),
        bytes_per_connection: None,
        interval: None,
        intercept_bytes: None,
        note: None,
    };
    let mut notes = Vec::new();
    match fit_line_interval(&points, confidence) {
        Ok(line) => {
            fit.bytes_per_connection = Some(line.fit.slope);
            fit.intercept_bytes = Some(line.fit.intercept);
            fit.interval = Some((line.slope.lo, line.slope.hi));
        }
        Err(why) => {
            if let Ok(line) = fit_line(&points) {
                fit.bytes_per_connection = Some(line.slope);
                fit.intercept_bytes = Some(line.intercept);
            }
            notes.push(if fit.connections.len() < 2 {
                "one number of connections only: sweep idle_connections over two or more for a slope"
                    .to_owned()
            } else {
                format!("no interval: {why}")
            });
        }
    }
    if unsettled > 0 {
        notes.push(format!(
            "in {unsettled} trial(s) RSS was still changing when the wait ended"
        ));
    }
    fit.note = (!notes.is_empty()).then(|| notes.join("; "));
    fit
}
