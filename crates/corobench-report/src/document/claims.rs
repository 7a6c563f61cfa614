//! The claims section: each published claim of the run with what it says,
//! where it comes from, the published figures beside ours, the measured
//! ratio and the verdict with its reason. One row per claim; a terminal
//! lays each row out as a record, Markdown and HTML as a table row.

use corobench_model::{ClaimOutcome, ClaimVerdict, Metric, MetricUnit, RunAnalysis};

use super::{Align, Block, Cell, Grid, Tone};
use crate::units;

/// The section's blocks; none for a run without claims.
pub(crate) fn claims_blocks(analysis: &RunAnalysis) -> Vec<Block> {
    if analysis.claims.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Heading("Published claims".to_owned()),
        Block::Line(format!(
            "Each claim's a/b measured here: the Hodges–Lehmann ratio of the trials with its {} \
             interval (Moses), against the claim's ratio and tolerance; ours are medians.",
            units::whole_pct(analysis.settings.confidence)
        )),
        Block::Records(claims_grid(analysis)),
    ]
}

/// One row per claim.
pub(crate) fn claims_grid(analysis: &RunAnalysis) -> Grid {
    use Align::Left;
    let mut grid = Grid::new(&[
        ("claim", Left),
        ("source", Left),
        ("compares", Left),
        ("published", Left),
        ("ours", Left),
        ("claimed", Left),
        ("measured", Left),
        ("verdict", Left),
        ("why", Left),
    ]);
    for verdict in &analysis.claims {
        grid.rows.push(row(analysis, verdict));
    }
    grid
}

fn row(analysis: &RunAnalysis, verdict: &ClaimVerdict) -> Vec<Cell> {
    let claim = &verdict.claim;
    let metric = claim.metric;
    let ours = pair(
        metric,
        verdict.a.as_ref().map(|m| m.median),
        verdict.b.as_ref().map(|m| m.median),
    );
    let published = claim
        .published
        .map_or("—".to_owned(), |p| pair(metric, Some(p.a), Some(p.b)));
    vec![
        Cell::plain(&claim.says),
        Cell::plain(&claim.source),
        Cell::plain(compares(analysis, verdict)),
        Cell::plain(published),
        Cell::plain(ours),
        Cell::plain(&verdict.claimed_text),
        Cell::plain(&verdict.ratio_text),
        Cell::toned(&verdict.verdict_text, outcome_tone(verdict.outcome)),
        Cell::plain(&verdict.why),
    ]
}

/// `a go-ants pool_size=64 c=32 / b go-nethttp c=32 · io-5ms · req/s`: the
/// sides as the run labels them, with their schedule, where measured; as
/// the spec named them otherwise.
fn compares(analysis: &RunAnalysis, verdict: &ClaimVerdict) -> String {
    let claim = &verdict.claim;
    let side = |measured: Option<usize>, selector: &str| {
        let Some(s) = measured.and_then(|i| analysis.scenarios.get(i)) else {
            return selector.to_owned();
        };
        if s.scenario.program.is_some() {
            s.label.clone()
        } else {
            format!("{} {}", s.label, s.scenario.schedule().key())
        }
    };
    let a = side(verdict.a.as_ref().map(|m| m.scenario), &claim.a.selector);
    let b = side(verdict.b.as_ref().map(|m| m.scenario), &claim.b.selector);
    let mut text = format!("a {a} / b {b}");
    if let Some(workload) = &claim.workload {
        text.push_str(&format!(" · {workload}"));
    }
    text.push_str(&format!(" · {}", claim.metric.label()));
    text
}

/// `146.9k / 48.01k req/s`, `1.36ms / 4.26ms`; `—` for a side without a figure.
fn pair(metric: Metric, a: Option<f64>, b: Option<f64>) -> String {
    let shown = |v: Option<f64>| v.map_or("—".to_owned(), |v| units::value(metric, v));
    // Rates and a program's figures print bare numbers: name their unit.
    let unit = match metric.unit() {
        MetricUnit::PerSecond | MetricUnit::Reported => format!(" {}", metric.label()),
        _ => String::new(),
    };
    format!("{} / {}{unit}", shown(a), shown(b))
}

/// Green where the claim holds, red where it does not, yellow where the
/// run cannot tell.
pub(crate) fn outcome_tone(outcome: ClaimOutcome) -> Tone {
    match outcome {
        ClaimOutcome::Consistent => Tone::Improved,
        ClaimOutcome::RefutedLower | ClaimOutcome::RefutedHigher => Tone::Regressed,
        ClaimOutcome::Inconclusive | ClaimOutcome::NotMeasured => Tone::Warning,
    }
}
