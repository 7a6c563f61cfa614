//! The human summary of a merged load report: the load summary of the
//! whole, then one row per generator.

use std::fmt::Write as _;

use corobench_model::{GeneratorPart, LoadReport};

use crate::load_summary;
use crate::units::{latency_us, whole_rate};

/// Renders the summary; `percentiles` are read from the merged histograms,
/// `start_asked_as` as [`load_summary::render`] takes it.
#[must_use]
pub fn render(report: &LoadReport, percentiles: &[f64], start_asked_as: &str) -> String {
    let mut out = load_summary::render(report, percentiles, start_asked_as);
    let Some(detail) = &report.merged else {
        out.push_str("\n  One generator: nothing was merged.\n");
        return out;
    };
    let _ = writeln!(
        out,
        "\n  Merged      {} generators, measuring together for {:.2}s; req/s sums their rates",
        detail.generators.len(),
        report.elapsed_s
    );
    let source_width = detail
        .generators
        .iter()
        .map(|g| g.source.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        out,
        "  {:<source_width$}  {:<12}  {:>10}  {:>10}  {:>9}  {:>9}  {:>5}",
        "report", "host", "start", "req/s", "p99", "CPU/req", "CPU"
    );
    let earliest = detail
        .generators
        .iter()
        .filter_map(|g| g.placement.window_start_unix_us)
        .min()
        .unwrap_or(0);
    for part in &detail.generators {
        out.push_str(&generator_row(part, earliest, source_width));
    }
    out.push_str("  start: when its window opened, after the earliest; CPU: of its cores\n");
    out
}

fn generator_row(part: &GeneratorPart, earliest_us: u64, source_width: usize) -> String {
    let start_us = part.placement.window_start_unix_us.unwrap_or(earliest_us);
    let p99 = part.latency.percentile_us(99.0).unwrap_or(0);
    format!(
        "  {:<source_width$}  {:<12}  {:>10}  {:>10}  {:>9}  {:>9}  {:>4.0}%\n",
        part.source,
        part.placement.host.as_deref().unwrap_or("?"),
        format!(
            "+{}",
            latency_us(start_us.saturating_sub(earliest_us) as f64)
        ),
        whole_rate(part.requests_per_s),
        latency_us(p99 as f64),
        latency_us(part.generator.cpu_us_per_request),
        part.generator.utilization * 100.0
    )
}
