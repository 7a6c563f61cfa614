//! The table of idle scenarios: an idle trial sends no load, so the load
//! columns of a server scenario (req/s, latencies, errors) would all read
//! "—". Its figures are the memory the target holds for its idle
//! connections, with its interval, and the CPU it spent holding them.

use corobench_model::{Metric, RunAnalysis, ScenarioAnalysis};

use super::notes::Notes;
use super::{Align, Cell, Grid, Tone, center_and_ci, range};
use crate::units;

/// One row per idle scenario: settled RSS (median ± CI, range), trials
/// that succeeded, the server's CPU, warnings.
pub(crate) fn idle_grid(analysis: &RunAnalysis, group: &[usize], notes: &Notes<'_>) -> Grid {
    let mut grid = Grid::new(&[
        ("scenario", Align::Left),
        ("RSS", Align::Right),
        ("range", Align::Right),
        ("n", Align::Right),
        ("CPU", Align::Right),
        ("", Align::Left),
    ]);
    for &i in group {
        grid.rows.push(row(&analysis.scenarios[i], notes));
    }
    grid
}

fn row(s: &ScenarioAnalysis, notes: &Notes<'_>) -> Vec<Cell> {
    let rss = s.metrics.get(&Metric::PeakRssBytes);
    let cpu = s.metrics.get(&Metric::ServerCpuPct);
    vec![
        Cell::plain(&s.label),
        Cell::plain(rss.map_or("—".to_owned(), |v| center_and_ci(Metric::PeakRssBytes, v))),
        Cell::plain(rss.map_or(String::new(), |v| range(Metric::PeakRssBytes, v))),
        Cell::plain(format!("{}", s.trials_ok)),
        Cell::plain(cpu.map_or("—".to_owned(), |v| {
            units::value(Metric::ServerCpuPct, v.median)
        })),
        Cell::toned(notes.markers(&s.warnings), Tone::Warning),
    ]
}
