//! The capacity section of a run that searched capacity: each search's
//! capacity with its interval, the targets compared with the baseline, and
//! the latency at every rate tried (the curve the capacity was read from).

use corobench_model::{
    CapacityAnalysis, CapacityComparison, CapacityEstimate, CapacityRate, Metric, MetricSummary,
    RateVerdict, RunAnalysis, ScenarioCapacity,
};

use super::{Align, Block, Cell, Grid, Tone};
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
        ("note", Left),
    ]);
    for search in &capacity.scenarios {
        let trials: u32 = search
            .rates
            .iter()
            .map(|r| r.passed + r.failed + r.generator_limited + r.broken)
            .sum();
        grid.rows.push(vec![
            Cell::plain(&search.key),
            Cell::plain(capacity_text(&search.estimate)),
            Cell::plain(interval_text(&search.estimate)),
            Cell::plain(search.rates.len().to_string()),
            Cell::plain(trials.to_string()),
            Cell::plain(search_note(search)),
        ]);
    }
    grid
}

/// `12.34k req/s`, `≥ 40.0k req/s`, `< 250.0 req/s`, `—`.
pub(crate) fn capacity_text(estimate: &CapacityEstimate) -> String {
    match estimate {
        CapacityEstimate::Estimated { estimate, .. } => format!("{} req/s", units::si(*estimate)),
        CapacityEstimate::AtLeast { rate, .. } => format!("≥ {} req/s", units::si(*rate)),
        CapacityEstimate::Below { rate } => format!("< {} req/s", units::si(*rate)),
        CapacityEstimate::SingleRate { rate } => format!("≈ {} req/s", units::si(*rate)),
        CapacityEstimate::NotDecreasing | CapacityEstimate::NoTrials => "—".to_owned(),
    }
}

/// `11.9k…12.8k`, or `—` where no interval exists.
fn interval_text(estimate: &CapacityEstimate) -> String {
    match estimate {
        CapacityEstimate::Estimated { lo, hi, .. } => {
            let end = |v: f64| {
                if v.is_finite() {
                    units::si3(v)
                } else {
                    "∞".to_owned()
                }
            };
            format!("{}…{}", end(*lo), end(*hi))
        }
        _ => "—".to_owned(),
    }
}

/// What a reader must know about a search's capacity.
fn search_note(search: &ScenarioCapacity) -> String {
    let mut text = note(&search.estimate);
    if let (Some(limit), CapacityEstimate::Estimated { .. }) =
        (search.generator_limit, &search.estimate)
    {
        text.push_str(&format!(
            "; the generator could not drive {} req/s: rates from there say little about the server",
            units::si(limit)
        ));
    }
    text
}

/// What a reader must know about an estimate.
fn note(estimate: &CapacityEstimate) -> String {
    match estimate {
        CapacityEstimate::Estimated {
            between, monotone, ..
        } => {
            let mut text = format!(
                "between {} (passed) and {} (failed)",
                units::si(between[0]),
                units::si(between[1])
            );
            if !monotone {
                text.push_str("; pass fractions rise somewhere with the rate: noisy, or not only a load limit");
            }
            text
        }
        CapacityEstimate::AtLeast {
            generator_limit: true,
            ..
        } => "generator limit: the generator could offer no more; give it more cores".to_owned(),
        CapacityEstimate::AtLeast { .. } => {
            "every rate passed up to the highest tried; raise max_rate".to_owned()
        }
        CapacityEstimate::Below { .. } => {
            "every rate failed down to the lowest tried; lower min_rate or relax the objective"
                .to_owned()
        }
        CapacityEstimate::SingleRate { .. } => {
            "passes and failures at one rate only: no curve to fit".to_owned()
        }
        CapacityEstimate::NotDecreasing => {
            "failures do not grow with the rate: they are not a capacity limit".to_owned()
        }
        CapacityEstimate::NoTrials => "no trial measured anything".to_owned(),
    }
}

fn comparison_grid(comparisons: &[CapacityComparison], alpha: f64) -> Grid {
    use Align::{Left, Right};
    let mut grid = Grid::new(&[
        ("capacity of", Left),
        ("over", Left),
        ("ratio", Right),
        ("interval", Right),
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
            Cell::toned(format!("{:.2}×{mark}", c.ratio), tone),
            Cell::plain(format!("{}…{}", ratio_end(c.lo), ratio_end(c.hi))),
            Cell::plain(format!("{:.3}", c.p_value)),
        ]);
    }
    grid
}

/// `0.55`, or `∞` for an unbounded end.
fn ratio_end(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "∞".to_owned()
    }
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
        s.as_ref().map_or("—".to_owned(), |s| {
            format!("{} ± {}", units::value(metric, s.median), s.ci_text)
        })
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
