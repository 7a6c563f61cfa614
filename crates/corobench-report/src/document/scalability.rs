//! The USL fits of concurrency sweeps as lines of text: one heading per
//! sweep, one line per series with λ, σ, κ and the peak, or why the data
//! support no fit.

use corobench_model::{FittedValue, Metric, RunAnalysis, Scalability, Sweep, UslEstimates};

use super::Block;
use crate::units;

/// A heading and a line per series for every sweep that was fitted.
pub(crate) fn scalability_blocks(analysis: &RunAnalysis) -> Vec<Block> {
    let mut blocks = Vec::new();
    for sweep in &analysis.sweeps {
        let fitted: Vec<(&str, &Scalability)> = sweep
            .series
            .iter()
            .filter_map(|s| Some((s.label.as_str(), s.scalability.as_ref()?)))
            .collect();
        let Some((_, first)) = fitted.first() else {
            continue;
        };
        blocks.push(Block::Heading(heading(sweep, first, analysis)));
        blocks.extend(
            fitted
                .iter()
                .map(|(label, s)| Block::Line(format!("{label}: {}", series_line(s)))),
        );
    }
    blocks
}

/// `scalability · plaintext over connections (USL fitted to req/s, 95% intervals)`.
fn heading(sweep: &Sweep, first: &Scalability, analysis: &RunAnalysis) -> String {
    format!(
        "scalability · {} over {} (USL fitted to {} of every trial, {} bootstrap intervals)",
        sweep.workload,
        sweep.dimension,
        first.metric.label(),
        units::whole_pct(analysis.settings.confidence)
    )
}

/// λ, σ, κ and the peak with their intervals, or why there is no fit.
pub(crate) fn series_line(scalability: &Scalability) -> String {
    let Some(fit) = &scalability.fit else {
        return scalability.note.clone().unwrap_or_default();
    };
    let metric = scalability.metric;
    let mut line = format!(
        "λ {} · σ {} · κ {}",
        figure(&fit.lambda, |v| units::value(metric, v)),
        figure(&fit.sigma, |v| format!("{v:.4}")),
        figure(&fit.kappa, |v| format!("{v:.3e}")),
    );
    line.push_str(" · ");
    line.push_str(&peak(fit, metric));
    if let Some(note) = &scalability.note {
        line.push_str(&format!(" ({note})"));
    }
    line.push_str(&format!(" · {} points", scalability.points));
    line
}

/// `peak 9.52k [9.40k, 9.61k] req/s at N* 30.8 [28.9, 33.0]`, or the
/// ceiling the curve approaches without a peak.
fn peak(fit: &UslEstimates, metric: Metric) -> String {
    let throughput = fit
        .peak_throughput
        .as_ref()
        .map(|x| figure(x, |v| units::value(metric, v)));
    match (&fit.peak_concurrency, throughput) {
        (Some(n), Some(x)) => format!(
            "peak {x} {} at N* {}",
            metric.label(),
            figure(n, |v| format!("{v:.1}"))
        ),
        (None, Some(x)) => format!("no peak, ceiling λ/σ {x} {}", metric.label()),
        (_, None) => "no peak or ceiling in sight (σ and κ are 0)".to_owned(),
    }
}

/// `1.000k [995.2, 1.005k]`; an unbounded side shows as `∞`.
fn figure(value: &FittedValue, format: impl Fn(f64) -> String) -> String {
    let bound = |b: Option<f64>| b.map_or_else(|| "∞".to_owned(), &format);
    format!(
        "{} [{}, {}]",
        format(value.estimate),
        bound(value.lo),
        bound(value.hi)
    )
}
