//! The table of program scenarios: a program reports figures of its own
//! (`req/s`, `p99-ms`, `B/op`, `tasks/s`), so its columns are those figures
//! rather than the load columns of a server scenario.

use corobench_model::{Better, Metric, RunAnalysis, ScenarioAnalysis};

use super::notes::Notes;
use super::{Align, Cell, Grid, Tone, center_and_ci};
use crate::units;

/// The program figures of a group's scenarios, in reading order: rates
/// first, then latencies, then counts of work done, then costs, then bounds;
/// figures that are zero everywhere (no errors of a kind) are left out, and
/// so is `ns/op` (the run's length, shown by its rate).
fn columns(analysis: &RunAnalysis, group: &[usize]) -> Vec<Metric> {
    let mut metrics: Vec<Metric> = Vec::new();
    for &i in group {
        for (&metric, summary) in &analysis.scenarios[i].metrics {
            let Metric::Program(unit) = metric else {
                continue;
            };
            let shown = unit.as_str() != "ns/op" && summary.max != 0.0;
            if shown && !metrics.contains(&metric) {
                metrics.push(metric);
            }
        }
    }
    metrics.sort_by_key(|m| (reading_rank(*m), m.label()));
    metrics
}

fn reading_rank(metric: Metric) -> u8 {
    let label = metric.label();
    match metric {
        // A bound is context for the figure it bounds: last.
        _ if label.contains("bound") => 4,
        _ if label.ends_with("/s") => 0,
        _ if label.ends_with("-ms") => 1,
        m if m.better() == Better::Higher => 2,
        _ => 3,
    }
}

/// One row per program scenario: its figures (the first with its interval),
/// trials that succeeded, the server's CPU and memory when it had one.
pub(crate) fn program_grid(analysis: &RunAnalysis, group: &[usize], notes: &Notes<'_>) -> Grid {
    let metrics = columns(analysis, group);
    let mut header: Vec<(&str, Align)> = vec![("scenario", Align::Left)];
    header.extend(metrics.iter().map(|m| (m.label(), Align::Right)));
    header.extend([
        ("n", Align::Right),
        ("server CPU", Align::Right),
        ("server RSS", Align::Right),
        ("", Align::Left),
    ]);
    let mut grid = Grid::new(&header);
    for &i in group {
        grid.rows.push(row(&analysis.scenarios[i], &metrics, notes));
    }
    grid
}

fn row(s: &ScenarioAnalysis, metrics: &[Metric], notes: &Notes<'_>) -> Vec<Cell> {
    let mut row = vec![Cell::plain(&s.label)];
    for (k, &metric) in metrics.iter().enumerate() {
        let text = s.metrics.get(&metric).map_or("—".to_owned(), |summary| {
            if k == 0 {
                center_and_ci(metric, summary)
            } else {
                units::value(metric, summary.median)
            }
        });
        row.push(Cell::plain(text));
    }
    row.push(Cell::plain(format!("{}", s.trials_ok)));
    for metric in [Metric::ServerCpuPct, Metric::PeakRssBytes] {
        let text = s
            .metrics
            .get(&metric)
            .map_or("—".to_owned(), |v| units::value(metric, v.median));
        row.push(Cell::plain(text));
    }
    row.push(Cell::toned(notes.markers(&s.warnings), Tone::Warning));
    row
}

/// `go-fanout-client · program beside go-nethttp gomaxprocs=1`.
pub(crate) fn program_heading(s: &ScenarioAnalysis) -> String {
    let beside = s
        .scenario
        .program
        .as_ref()
        .and_then(|p| p.server.as_ref())
        .map_or(String::new(), |server| format!(" beside {server}"));
    format!("{} · program{beside}", s.scenario.target)
}
