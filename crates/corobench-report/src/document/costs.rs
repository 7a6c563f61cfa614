//! What a request cost the kernel and the scheduler: the compact view's
//! columns beside req/s (syscalls/req and the CPU split) and, in the
//! detailed layouts, a table of every cost with its interval.

use corobench_model::{Cost, Metric, PerRequest, RunAnalysis};

use super::{Align, Cell, Grid, center_and_ci};
use crate::units;

/// The costs the scenario table shows beside req/s: the CPU total only
/// where a scenario's split is below the ticks' resolution.
pub(crate) const COMPACT: [PerRequest; 4] = [
    PerRequest::server(Cost::Syscalls),
    PerRequest::server(Cost::UserCpu),
    PerRequest::server(Cost::SystemCpu),
    PerRequest::SERVER_CPU,
];

/// The costs in `costs` that some scenario of `group` has a value for.
pub(crate) fn measured(
    analysis: &RunAnalysis,
    group: &[usize],
    costs: &[PerRequest],
) -> Vec<Metric> {
    having(
        analysis,
        group,
        costs.iter().map(|&c| Metric::PerRequest(c)),
    )
}

/// The metrics of `metrics` that some scenario of `group` has a value for.
pub(crate) fn having(
    analysis: &RunAnalysis,
    group: &[usize],
    metrics: impl Iterator<Item = Metric>,
) -> Vec<Metric> {
    metrics
        .filter(|m| {
            group
                .iter()
                .any(|&i| analysis.scenarios[i].metrics.contains_key(m))
        })
        .collect()
}

/// The median of `metric` in scenario `index`, or `—`.
pub(crate) fn median_cell(analysis: &RunAnalysis, index: usize, metric: Metric) -> Cell {
    Cell::plain(
        analysis.scenarios[index]
            .metrics
            .get(&metric)
            .map_or("—".to_owned(), |s| units::value(metric, s.median)),
    )
}

/// Two tables, the server's costs and the generator's (so each fits a
/// terminal): one row per scenario, one column per cost measured (median ±
/// interval); none for a side the group has no cost of.
pub(crate) fn costs_grids(analysis: &RunAnalysis, group: &[usize]) -> Vec<Grid> {
    let (server, generator) = PerRequest::ALL.split_at(PerRequest::ALL.len() / 2);
    let server = [server, &[PerRequest::SERVER_CPU]].concat();
    [
        (server.as_slice(), "server per request"),
        (generator, "generator per request"),
    ]
    .into_iter()
    .filter_map(|(costs, title)| {
        metrics_grid(analysis, group, &measured(analysis, group, costs), title)
    })
    .collect()
}

/// One row per scenario of `group`, one column per metric (median ±
/// interval); none without metrics.
pub(crate) fn metrics_grid(
    analysis: &RunAnalysis,
    group: &[usize],
    metrics: &[Metric],
    title: &str,
) -> Option<Grid> {
    if metrics.is_empty() {
        return None;
    }
    let mut columns = vec![(title, Align::Left)];
    columns.extend(metrics.iter().map(|m| (m.label(), Align::Right)));
    let mut grid = Grid::new(&columns);
    for &i in group {
        let s = &analysis.scenarios[i];
        let mut row = vec![Cell::plain(&s.label)];
        row.extend(metrics.iter().map(|m| {
            Cell::plain(
                s.metrics
                    .get(m)
                    .map_or("—".to_owned(), |v| center_and_ci(*m, v)),
            )
        }));
        grid.rows.push(row);
    }
    Some(grid)
}
