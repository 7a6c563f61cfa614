//! The capacity section of a run that searched capacity: each search's
//! capacity with its interval, the targets compared with the baseline, and
//! the latency at every rate tried (the curve the capacity was read from).

use corobench_model::{
    CapacityAnalysis, CapacityComparison, CapacityRate, Metric, MetricSummary, RateVerdict,
    RunAnalysis, ScenarioCapacity,
};

use super::{Align, Block, Cell, Grid, Tone};
use crate::capacity::{estimate_text, interval_text, ratio_text, search_ending};
use crate::units;

/// The section's blocks; none for a run without a capacity search.
pub(crate) fn capacity_blocks(analysis: &RunAnalysis) -> Vec<Block> {
    let Some(capacity) = &analysis.capacity else {
        return Vec::new();
    };
    let mut blocks = vec![
        Block::Heading("Capacity".to_owned()),
        Block::Line(explanation(capacity, analysis.settings.confidence)),
        Block::Grid(capacity_grid(capacity)),
    ];
    if !capacity.comparisons.is_empty() {
        blocks.push(Block::Grid(comparison_grid(
            &capacity.comparisons,
            analysis.settings.alpha,
        )));
    }
    for search in &capacity.scenarios {
        blocks.push(Block::Heading(format!(
            "latency by offered rate · {}",
            search.key
        )));
        blocks.push(Block::Grid(rates_grid(search)));
    }
    blocks
}

fn explanation(capacity: &CapacityAnalysis, confidence: f64) -> String {
    let slos: Vec<String> = capacity
        .settings
        .slos
        .iter()
        .map(ToString::to_string)
        .collect();
    format!(
        "Capacity: the highest open-loop rate at which {} hold — where the pass fraction, \
         fitted as a step that never rises with the rate, falls through one half (between the \
         two rates tried around it), with its {} bootstrap interval; {} trials per rate, a rate \
         passes when most of its trials do.",
        slos.join(" and "),
        units::whole_pct(confidence),
        capacity.settings.trials_per_rate
    )
}

fn capacity_grid(capacity: &CapacityAnalysis) -> Grid {
    use Align::{Left, Right};
    let mut grid = Grid::new(&[
        ("scenario", Left),
        ("capacity", Right),
        ("interval", Right),
        ("rates", Right),
        ("trials", Right),
        ("how the search ended", Left),
    ]);
    for search in &capacity.scenarios {
        let trials: u32 = search
            .rates
            .iter()
            .map(|r| r.passed + r.failed + r.generator_limited + r.broken)
            .sum();
        grid.rows.push(vec![
            Cell::plain(&search.key),
            Cell::plain(estimate_text(&search.estimate)),
            Cell::plain(interval_text(&search.estimate)),
            Cell::plain(search.rates.len().to_string()),
            Cell::plain(trials.to_string()),
            Cell::plain(search_ending(search)),
        ]);
    }
    grid
}

fn comparison_grid(comparisons: &[CapacityComparison], alpha: f64) -> Grid {
    use Align::{Left, Right};
    let mut grid = Grid::new(&[
        ("capacity of", Left),
        ("over", Left),
        ("ratio and interval", Right),
        ("p", Right),
    ]);
    for c in comparisons {
        let tone = match (c.significant, c.ratio >= 1.0) {
            (false, _) => Tone::Plain,
            (true, true) => Tone::Improved,
            (true, false) => Tone::Regressed,
        };
        let mark = if c.p_value <= alpha { "" } else { " ~" };
        grid.rows.push(vec![
            Cell::plain(&c.b),
            Cell::plain(&c.a),
            Cell::toned(format!("{}{mark}", ratio_text(c)), tone),
            Cell::plain(format!("{:.3}", c.p_value)),
        ]);
    }
    grid
}

fn rates_grid(search: &ScenarioCapacity) -> Grid {
    use Align::{Left, Right};
    let mut grid = Grid::new(&[
        ("offered", Right),
        ("sent", Right),
        ("pass", Right),
        ("p50", Right),
        ("p99", Right),
        ("p99.9", Right),
        ("verdict", Left),
    ]);
    for rate in &search.rates {
        grid.rows.push(rate_row(rate));
    }
    grid
}

fn rate_row(rate: &CapacityRate) -> Vec<Cell> {
    let latency = |s: &Option<MetricSummary>, metric: Metric| {
        s.as_ref()
            .map_or("—".to_owned(), |s| super::center_and_ci(metric, s))
    };
    let judged = rate.passed + rate.failed;
    let (verdict, tone) = match rate.verdict {
        RateVerdict::Pass => ("pass", Tone::Improved),
        RateVerdict::Fail => ("fail", Tone::Regressed),
        RateVerdict::GeneratorLimit => ("generator limit", Tone::Warning),
        RateVerdict::Undecided => ("undecided", Tone::Warning),
    };
    vec![
        Cell::plain(units::si(rate.rate)),
        Cell::plain(rate.achieved_rate.map_or("—".to_owned(), units::si)),
        Cell::plain(format!("{}/{judged}", rate.passed)),
        Cell::plain(latency(&rate.p50_us, Metric::LatencyP50Us)),
        Cell::plain(latency(&rate.p99_us, Metric::LatencyP99Us)),
        Cell::plain(latency(&rate.p999_us, Metric::LatencyP999Us)),
        Cell::toned(verdict, tone),
    ]
}
