//! The comparison of two runs: one benchstat-like table per metric, rows
//! keyed by scenario, A (the baseline) against B, with a geomean row; then
//! the scenarios only one run measured, and footnotes.

use corobench_model::{Better, CompareSide, CompareTable, Geomean, RunComparison, Warning};

use super::notes::{Notes, RowName, named_rows};
use super::{
    Align, Block, Cell, Grid, Tone, center_and_ci, delta_cell, machine_line, run_identity,
};
use crate::units;

/// Blocks of the `corobench compare` report.
pub(crate) fn comparison_document(comparison: &RunComparison) -> Vec<Block> {
    let mut blocks = vec![
        Block::Title(format!(
            "corobench compare {} {}",
            comparison.a.run.id, comparison.b.run.id
        )),
        Block::Line(side_line("A", &comparison.a)),
        Block::Line(side_line("B", &comparison.b)),
        Block::Line(format!(
            "Medians of the trials ± the half-width of their {confidence} confidence interval; \
             deltas compare B with A: the change (Hodges–Lehmann) with its {confidence} \
             interval where the Mann–Whitney U test on the trials gives p ≤ {}, ~ otherwise.",
            comparison.settings.alpha,
            confidence = units::whole_pct(comparison.settings.confidence),
        )),
    ];
    let notes = Notes::all(&comparison.warnings);
    for table in &comparison.tables {
        blocks.push(Block::Heading(table_heading(table)));
        blocks.push(Block::Grid(metric_grid(table, &notes)));
        let notes = table.geomean.iter().flat_map(|g| &g.notes);
        blocks.extend(notes.map(|note| Block::Line(format!("geomean: {note}"))));
    }
    for (label, keys) in [("A", &comparison.only_in_a), ("B", &comparison.only_in_b)] {
        if !keys.is_empty() {
            blocks.push(Block::Line(format!(
                "only in {label} (not compared): {}",
                keys.join(", ")
            )));
        }
    }
    let rows = |w: &Warning| {
        named_rows(w, scenarios_of(comparison, w), |key| RowName {
            table: None,
            label: key.to_owned(),
        })
    };
    blocks.push(Block::Notes(notes.lines(&rows)));
    blocks
}

/// How many scenarios the run a warning is about measured (both runs' for
/// a warning about neither alone).
fn scenarios_of(comparison: &RunComparison, warning: &Warning) -> usize {
    let matched = comparison.tables.first().map_or(0, |t| t.rows.len());
    let about = |side: &CompareSide| {
        warning
            .message
            .starts_with(&format!("run {} (", side.run.id))
    };
    if about(&comparison.a) || warning.message.starts_with("run A (") {
        matched + comparison.only_in_a.len()
    } else if about(&comparison.b) || warning.message.starts_with("run B (") {
        matched + comparison.only_in_b.len()
    } else {
        matched
    }
}

fn side_line(label: &str, side: &CompareSide) -> String {
    format!(
        "{label}: run {} · {} · {} trials per scenario · {}",
        side.run.id,
        run_identity(&side.run),
        side.trials_per_scenario,
        machine_line(&side.run)
    )
}

/// `req/s (higher is better)`.
fn table_heading(table: &CompareTable) -> String {
    let direction = match table.metric.better() {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    };
    format!("{} ({direction})", table.metric.label())
}

fn metric_grid(table: &CompareTable, notes: &Notes<'_>) -> Grid {
    let mut grid = Grid::new(&[
        ("scenario", Align::Left),
        ("A", Align::Right),
        ("B", Align::Right),
        ("delta", Align::Right),
        ("", Align::Left),
    ]);
    let metric = table.metric;
    let summary = |s: Option<&corobench_model::MetricSummary>| {
        s.map_or("—".to_owned(), |s| center_and_ci(metric, s))
    };
    for row in &table.rows {
        grid.rows.push(vec![
            Cell::plain(&row.key),
            Cell::plain(summary(row.a.as_ref())),
            Cell::plain(summary(row.b.as_ref())),
            row.comparison.as_ref().map_or(Cell::plain("—"), delta_cell),
            Cell::toned(notes.markers_for(&row.key, metric), Tone::Warning),
        ]);
    }
    if let Some(geomean) = &table.geomean {
        grid.rows.push(geomean_row(metric, geomean));
    }
    grid
}

fn geomean_row(metric: corobench_model::Metric, g: &Geomean) -> Vec<Cell> {
    let value = |v: Option<f64>| v.map_or("—".to_owned(), |v| units::value(metric, v));
    vec![
        Cell::plain("geomean"),
        Cell::plain(value(g.a)),
        Cell::plain(value(g.b)),
        Cell::plain(g.delta_text.clone().unwrap_or_else(|| "—".to_owned())),
        Cell::plain(""),
    ]
}
