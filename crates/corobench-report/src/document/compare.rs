//! The comparison of two runs: one benchstat-like table per metric, rows
//! keyed by scenario, A (the baseline) against B, with a geomean row; then
//! the scenarios only one run measured, and footnotes.

use corobench_model::{Better, CompareSide, CompareTable, Geomean, RunComparison, Warning};

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
            "Medians of the trials ± the half-width of their {} confidence interval; deltas \
             compare B with A (Mann–Whitney U test, ~ when p > {}).",
            units::whole_pct(comparison.settings.confidence),
            comparison.settings.alpha
        )),
    ];
    for table in &comparison.tables {
        blocks.push(Block::Heading(table_heading(table)));
        blocks.push(Block::Grid(metric_grid(table, &comparison.warnings)));
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
    let notes = comparison
        .warnings
        .iter()
        .enumerate()
        .map(|(i, w)| (i + 1, w.message.clone()))
        .collect();
    blocks.push(Block::Notes(notes));
    blocks
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

fn metric_grid(table: &CompareTable, warnings: &[Warning]) -> Grid {
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
            Cell::toned(markers_for(&row.key, warnings), Tone::Warning),
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

/// Markers of the warnings that name this scenario key.
fn markers_for(key: &str, warnings: &[Warning]) -> String {
    let indices: Vec<usize> = warnings
        .iter()
        .enumerate()
        .filter(|(_, w)| w.scenarios.iter().any(|s| s == key))
        .map(|(i, _)| i)
        .collect();
    super::markers(&indices)
}
