//! The run report: a header, one section per workload and schedule with the
//! scenarios and their comparison with the baseline, then footnotes.

use std::collections::{BTreeMap, BTreeSet};

use corobench_model::{Metric, RunAnalysis, ScenarioAnalysis, ScenarioComparison, WarningKind};

use super::claims::claims_blocks;
use super::notes::{Notes, RowName, named_rows};
use super::{
    Align, Block, Cell, Grid, Tone, center_and_ci, delta_cell, group_heading, groups, machine_line,
    range, run_line, shown_comparisons,
};
use crate::units;

/// How comparisons with the baseline are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ComparisonLayout {
    /// One row per scenario and metric.
    Rows,
    /// One row per scenario and headline metric (req/s and p99, a
    /// program's rates and p99): a first look that fits a terminal.
    Compact,
    /// One row per scenario, one column per metric: fits a wide page.
    Matrix,
}

/// Where the published claims go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClaimsPlace {
    /// Above the tables: what a report is read for.
    Top,
    /// After the tables and notes: the last thing a finished run prints.
    End,
    /// Not here (the HTML page gives them a section of their own).
    Omit,
}

/// The run report: a header, the claims, one section per workload and
/// schedule with every metric compared, footnotes.
pub(crate) fn run_document(analysis: &RunAnalysis) -> Vec<Block> {
    run_document_with(analysis, ComparisonLayout::Rows, ClaimsPlace::Top)
}

/// [`run_document`] with a choice of comparison layout and claims' place.
pub(crate) fn run_document_with(
    analysis: &RunAnalysis,
    layout: ComparisonLayout,
    claims: ClaimsPlace,
) -> Vec<Block> {
    let mut blocks = run_header(analysis, layout);
    // The first look notes only what it shows.
    let notes = match layout {
        // The split's note says why its table shows a `—` or the total.
        ComparisonLayout::Compact => Notes::about(
            &analysis.warnings,
            headline,
            &[WarningKind::CpuSplitBelowResolution],
        ),
        ComparisonLayout::Rows | ComparisonLayout::Matrix => Notes::all(&analysis.warnings),
    };
    if claims == ClaimsPlace::Top {
        blocks.extend(claims_blocks(analysis));
    }
    // The HTML page (the matrix layout) gives capacity a section and a chart.
    if layout != ComparisonLayout::Matrix {
        blocks.extend(super::capacity::capacity_blocks(analysis));
    }
    for group in groups(&analysis.scenarios) {
        let first = &analysis.scenarios[group[0]];
        blocks.push(Block::Heading(group_heading(first)));
        let program = first.scenario.program.is_some();
        let idle = first.scenario.workload.idle;
        blocks.push(Block::Grid(if program {
            super::program::program_grid(analysis, &group, &notes)
        } else if idle {
            super::idle::idle_grid(analysis, &group, &notes)
        } else {
            scenario_grid(analysis, &group, &notes)
        }));
        if layout != ComparisonLayout::Compact && !program && !idle {
            blocks.extend(
                super::costs::costs_grids(analysis, &group)
                    .into_iter()
                    .map(Block::Grid),
            );
        }
        if !program {
            blocks.extend(super::pool::pool_grid(analysis, &group).map(Block::Grid));
            blocks.extend(super::tls::tls_grid(analysis, &group).map(Block::Grid));
        }
        let comparisons = match layout {
            ComparisonLayout::Rows => comparison_grid(analysis, &group, |_| true),
            ComparisonLayout::Compact => comparison_grid(analysis, &group, headline),
            ComparisonLayout::Matrix => comparison_matrix(analysis, &group),
        };
        blocks.extend(comparisons.map(Block::Grid));
    }
    // The USL fits come before the footnotes; the HTML page (the matrix
    // layout) shows them under its sweep charts instead.
    if layout != ComparisonLayout::Matrix {
        blocks.extend(super::scalability::scalability_blocks(analysis));
        blocks.extend(super::profiles::profile_blocks(analysis));
    }
    blocks.extend(super::memory::memory_blocks(analysis));
    let namer = RowNames::of(analysis);
    let count = analysis.scenarios.len();
    let rows = |w: &corobench_model::Warning| named_rows(w, count, |key| namer.name(key));
    blocks.push(Block::Notes(notes.lines(&rows)));
    if claims == ClaimsPlace::End {
        blocks.extend(claims_blocks(analysis));
    }
    blocks
}

/// The metrics a compact comparison keeps, and whose notes the compact
/// view keeps: throughput and tail latency, of a server (req/s, p99) or as
/// a program reports them (`…/s`, `p99-ms`).
fn headline(metric: Metric) -> bool {
    match metric {
        Metric::RequestsPerS | Metric::LatencyP99Us => true,
        Metric::Program(unit) => unit.as_str().ends_with("/s") || unit.as_str() == "p99-ms",
        _ => false,
    }
}

fn run_header(analysis: &RunAnalysis, layout: ComparisonLayout) -> Vec<Block> {
    let run = &analysis.run;
    let mut blocks = vec![
        Block::Title(format!("corobench run {}", run.id)),
        Block::Line(run_line(
            run,
            analysis.scenarios.len(),
            analysis.trials_per_scenario,
        )),
        Block::Line(machine_line(run)),
    ];
    blocks.extend(protocol_line(analysis).map(Block::Line));
    blocks.push(Block::Line(format!(
        "Each figure is the median of the trials; ± is the half-width of its {} confidence \
         interval, range is min…max; n counts the trials that succeeded.",
        units::whole_pct(analysis.settings.confidence)
    )));
    blocks.extend(deltas_line(analysis, layout).map(Block::Line));
    blocks
}

/// What the deltas compare and how, when the run has any: with the
/// baseline target, within the baseline target's own sweeps, and each
/// target's protocols with its own cleartext HTTP/1.1.
fn deltas_line(analysis: &RunAnalysis, layout: ComparisonLayout) -> Option<String> {
    let scenarios = &analysis.scenarios;
    let of = |c: &ScenarioComparison| {
        (
            &scenarios[c.scenario].scenario,
            &scenarios[c.baseline].scenario,
        )
    };
    let is_protocol = |c: &&ScenarioComparison| {
        let (this, base) = of(c);
        this.target == base.target
            && (this.protocol != base.protocol || this.wire.tls_resume != base.wire.tls_resume)
    };
    let mut parts = Vec::new();
    if let Some(baseline) = &analysis.settings.baseline_target {
        let (within, across): (Vec<_>, Vec<_>) = analysis
            .comparisons
            .iter()
            .filter(|c| !is_protocol(c))
            .partition(|c| of(c).0.target == *baseline);
        if !across.is_empty() {
            parts.push(format!("each target with {baseline}"));
        }
        if !within.is_empty() {
            parts.push(format!(
                "each of {baseline}'s parameter values with its first"
            ));
        }
    }
    if analysis.comparisons.iter().any(|c| is_protocol(&c)) {
        parts.push(
            "each target's TLS and HTTP/2 scenarios with its own cleartext HTTP/1.1 one (full \
             handshakes with resumed ones)"
                .to_owned(),
        );
    }
    let what = match parts.split_last()? {
        (last, []) => last.clone(),
        (last, rest) => format!("{}, and {last}", rest.join(", ")),
    };
    let shown = if layout == ComparisonLayout::Compact {
        "; req/s and p99 only here, every metric with `corobench report --detail`"
    } else {
        ""
    };
    Some(format!(
        "Deltas compare {what}: the change (Hodges–Lehmann) with its {} interval where the \
         Mann–Whitney U test on the trials gives p ≤ {}, ~ otherwise{shown}.",
        units::whole_pct(analysis.settings.confidence),
        analysis.settings.alpha
    ))
}

/// What each trial did before and while it measured: the run's warm-up
/// and window, and the targets whose own minimum lengthened their warm-up.
fn protocol_line(analysis: &RunAnalysis) -> Option<String> {
    let all = &analysis.scenarios;
    let scenarios: Vec<&ScenarioAnalysis> = all
        .iter()
        .filter(|s| s.scenario.program.is_none() && !s.scenario.workload.idle)
        .collect();
    if scenarios.is_empty() && all.iter().all(|s| s.scenario.workload.idle) {
        return all.first().map(|_| {
            "Each trial starts the target fresh, opens the idle connections and reads the \
             target's memory once it settles; no load is sent."
                .to_owned()
        });
    }
    if scenarios.is_empty() {
        return all.first().map(|_| {
            "Each trial starts the program's server fresh (if it has one) and runs the program \
             to completion; its figures are its own."
                .to_owned()
        });
    }
    let window = scenarios.first()?.scenario.duration_s;
    let warmup = scenarios
        .iter()
        .map(|s| s.scenario.warmup_s)
        .fold(f64::INFINITY, f64::min);
    let raised: BTreeMap<&str, f64> = scenarios
        .iter()
        .filter(|s| s.scenario.warmup_s > warmup)
        .map(|s| (s.scenario.target.as_str(), s.scenario.warmup_s))
        .collect();
    let exceptions = if raised.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = raised.iter().map(|(t, w)| format!("{t} {w}s")).collect();
        format!(" ({}: the target's minimum)", list.join(", "))
    };
    let measures = format!("warms up {warmup}s{exceptions}, then measures {window}s");
    let targets: BTreeSet<&str> = scenarios
        .iter()
        .map(|s| s.scenario.target.as_str())
        .collect();
    Some(match already_running(analysis, &scenarios) {
        None => format!("Each trial starts the target fresh, {measures}."),
        Some(names) if names.len() == targets.len() => format!(
            "Each trial {measures}; {} already running, measured where {} without a \
             restart.",
            if names.len() == 1 {
                "the server was"
            } else {
                "the servers were"
            },
            if names.len() == 1 {
                "it is"
            } else {
                "they are"
            },
        ),
        Some(names) => format!(
            "Each trial starts the target fresh, {measures}; {} {} already running, measured \
             where {} without a restart.",
            names.join(", "),
            if names.len() == 1 { "was" } else { "were" },
            if names.len() == 1 {
                "it is"
            } else {
                "they are"
            },
        ),
    })
}

/// The targets measured where they already ran, if any.
fn already_running(analysis: &RunAnalysis, scenarios: &[&ScenarioAnalysis]) -> Option<Vec<String>> {
    let names: BTreeSet<&str> = scenarios
        .iter()
        .filter(|s| {
            s.warnings.iter().any(|&i| {
                analysis
                    .warnings
                    .get(i)
                    .is_some_and(|w| w.kind == WarningKind::NotFresh)
            })
        })
        .map(|s| s.scenario.target.as_str())
        .collect();
    (!names.is_empty()).then(|| names.into_iter().map(str::to_owned).collect())
}

fn scenario_grid(analysis: &RunAnalysis, group: &[usize], notes: &Notes<'_>) -> Grid {
    use Align::{Left, Right};
    let costs = super::costs::measured(analysis, group, &super::costs::COMPACT);
    let mut columns = vec![
        ("scenario", Left),
        ("req/s", Right),
        ("range", Right),
        ("n", Right),
    ];
    columns.extend(costs.iter().map(|m| (m.label(), Right)));
    columns.extend([
        ("mean", Right),
        ("p50", Right),
        ("p99", Right),
        ("p99.9", Right),
        ("CPU", Right),
        ("RSS", Right),
        ("err", Right),
        // Footnote markers; the superscripts speak for themselves.
        ("", Left),
    ]);
    let mut grid = Grid::new(&columns);
    for &i in group {
        let s = &analysis.scenarios[i];
        let median = |m: Metric| {
            s.metrics
                .get(&m)
                .map_or("—".to_owned(), |v| units::value(m, v.median))
        };
        let rate = s.metrics.get(&Metric::RequestsPerS);
        let mut row = vec![
            Cell::plain(&s.label),
            Cell::plain(rate.map_or("—".to_owned(), |r| center_and_ci(Metric::RequestsPerS, r))),
            Cell::plain(rate.map_or(String::new(), |r| range(Metric::RequestsPerS, r))),
            Cell::plain(format!("{}", s.trials_ok)),
        ];
        row.extend(
            costs
                .iter()
                .map(|&m| super::costs::median_cell(analysis, i, m)),
        );
        for m in [
            Metric::LatencyMeanUs,
            Metric::LatencyP50Us,
            Metric::LatencyP99Us,
            Metric::LatencyP999Us,
            Metric::ServerCpuPct,
            Metric::PeakRssBytes,
            Metric::ErrorRate,
        ] {
            row.push(Cell::plain(median(m)));
        }
        row.push(Cell::toned(notes.markers(&s.warnings), Tone::Warning));
        grid.rows.push(row);
    }
    grid
}

/// The comparisons of a group's scenarios, and whether they have more than
/// one baseline scenario (then each row names its own).
fn group_comparisons<'a>(
    analysis: &'a RunAnalysis,
    group: &[usize],
) -> (Vec<&'a ScenarioComparison>, bool) {
    let comparisons: Vec<&ScenarioComparison> = analysis
        .comparisons
        .iter()
        .filter(|c| group.contains(&c.scenario))
        .collect();
    let several = comparisons
        .iter()
        .any(|c| c.baseline != comparisons[0].baseline);
    (comparisons, several)
}

/// `go-ants pool_size=4`, or `… vs go-nethttp gomaxprocs=2` when a group
/// has several baseline scenarios.
fn compared_label(analysis: &RunAnalysis, c: &ScenarioComparison, several: bool) -> String {
    let label = &analysis.scenarios[c.scenario].label;
    if several {
        format!("{label} vs {}", analysis.scenarios[c.baseline].label)
    } else {
        label.clone()
    }
}

fn comparison_grid(
    analysis: &RunAnalysis,
    group: &[usize],
    shown: fn(Metric) -> bool,
) -> Option<Grid> {
    let (comparisons, several_baselines) = group_comparisons(analysis, group);
    let first = comparisons.first()?;
    let baseline_label = &analysis.scenarios[first.baseline].label;
    let title = format!("vs {baseline_label}");
    let mut grid = Grid::new(&[
        (title.as_str(), Align::Left),
        ("metric", Align::Left),
        ("baseline", Align::Right),
        ("this", Align::Right),
        ("delta", Align::Right),
    ]);
    for c in comparisons {
        let label = compared_label(analysis, c, several_baselines);
        let metrics = shown_comparisons(&c.metrics).filter(|m| shown(m.metric));
        for (k, m) in metrics.enumerate() {
            let first_cell = if k == 0 { label.clone() } else { String::new() };
            grid.rows.push(vec![
                Cell::plain(first_cell),
                Cell::plain(m.metric.label()),
                Cell::plain(units::value(m.metric, m.baseline)),
                Cell::plain(units::value(m.metric, m.value)),
                delta_cell(m),
            ]);
        }
    }
    Some(grid)
}

/// One row per compared scenario, one column per metric; each cell holds
/// the delta and, on a second line, the `p=… n=…` note.
fn comparison_matrix(analysis: &RunAnalysis, group: &[usize]) -> Option<Grid> {
    let (comparisons, several_baselines) = group_comparisons(analysis, group);
    let first = comparisons.first()?;
    let metrics: Vec<Metric> = Metric::ALL
        .into_iter()
        .chain([Metric::SERVER_CPU])
        .filter(|m| {
            let shown =
                |c: &&ScenarioComparison| shown_comparisons(&c.metrics).any(|x| x.metric == *m);
            comparisons.iter().any(shown)
        })
        .collect();
    let title = format!("vs {}", analysis.scenarios[first.baseline].label);
    let mut columns = vec![(title.as_str(), Align::Left)];
    columns.extend(metrics.iter().map(|m| (m.label(), Align::Right)));
    let mut grid = Grid::new(&columns);
    for c in comparisons {
        let mut row = vec![Cell::plain(compared_label(analysis, c, several_baselines))];
        for metric in &metrics {
            row.push(match c.metrics.iter().find(|m| m.metric == *metric) {
                Some(m) => Cell {
                    detail: Some(m.note_text.clone()),
                    ..Cell::toned(m.delta_text.clone(), super::verdict_tone(m))
                },
                None => Cell::plain("—"),
            });
        }
        grid.rows.push(row);
    }
    Some(grid)
}

/// How a note names a row of the run report: by its label, and where the
/// run has several tables, by its table too (`plaintext`, or `json
/// rate=2000/c=64` where a workload has several tables).
struct RowNames<'a> {
    analysis: &'a RunAnalysis,
    /// Each scenario's table (its place and name), when there is more
    /// than one table.
    tables: Vec<Option<(usize, String)>>,
}

impl<'a> RowNames<'a> {
    fn of(analysis: &'a RunAnalysis) -> Self {
        let groups = groups(&analysis.scenarios);
        let mut tables = vec![None; analysis.scenarios.len()];
        if groups.len() > 1 {
            let workload = |g: &Vec<usize>| analysis.scenarios[g[0]].scenario.workload.name.clone();
            for (place, group) in groups.iter().enumerate() {
                let name = workload(group);
                let shared = groups.iter().filter(|g| workload(g) == name).count() > 1;
                let first = &analysis.scenarios[group[0]].scenario;
                let name = if shared {
                    format!("{name} {}", first.schedule().key())
                } else {
                    name
                };
                for &i in group {
                    tables[i] = Some((place, name.clone()));
                }
            }
        }
        Self { analysis, tables }
    }

    fn name(&self, key: &str) -> RowName {
        let Some(index) = self
            .analysis
            .scenarios
            .iter()
            .position(|s| s.scenario.key == *key)
        else {
            return RowName {
                table: None,
                label: key.to_owned(),
            };
        };
        RowName {
            table: self.tables[index].clone(),
            label: self.analysis.scenarios[index].label.clone(),
        }
    }
}
