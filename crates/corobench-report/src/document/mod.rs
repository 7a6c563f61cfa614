//! The text reports as a sequence of blocks (titles, lines, tables,
//! footnotes), built once and drawn by `table` (terminal) and `markdown`.
//! Only layout happens here: every figure comes from the analysis.

use corobench_model::{
    Metric, MetricComparison, MetricSummary, RunRecord, ScenarioAnalysis, ScheduleKind, Verdict,
};

use crate::units;

pub(crate) mod across;
mod capacity;
mod claims;
mod compare;
mod costs;
mod idle;
mod memory;
mod notes;
mod pool;
mod profiles;
mod tls;
pub(crate) use memory::memory_line;
pub(crate) use profiles::{profile_blocks, profile_key};
mod program;
mod run;
mod scalability;

pub(crate) use claims::{claims_grid, outcome_tone};
pub(crate) use compare::comparison_document;
pub(crate) use run::{ClaimsPlace, ComparisonLayout, run_document, run_document_with};
pub(crate) use scalability::series_line;

/// How a cell should stand out on a colour terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tone {
    Plain,
    Improved,
    Regressed,
    Warning,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

#[derive(Clone, Debug)]
pub(crate) struct Cell {
    pub(crate) text: String,
    pub(crate) tone: Tone,
    /// A second, smaller line (only the HTML comparison matrix has one).
    pub(crate) detail: Option<String>,
}

impl Cell {
    pub(crate) fn plain(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            tone: Tone::Plain,
            detail: None,
        }
    }

    pub(crate) fn toned(text: impl Into<String>, tone: Tone) -> Self {
        Self {
            tone,
            ..Self::plain(text)
        }
    }
}

/// A table: a header, column alignments and rows of cells.
#[derive(Clone, Debug)]
pub(crate) struct Grid {
    pub(crate) header: Vec<String>,
    pub(crate) align: Vec<Align>,
    pub(crate) rows: Vec<Vec<Cell>>,
}

impl Grid {
    pub(crate) fn new(columns: &[(&str, Align)]) -> Self {
        Self {
            header: columns.iter().map(|(h, _)| (*h).to_owned()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Block {
    Title(String),
    Line(String),
    Heading(String),
    Grid(Grid),
    /// Rows too wide for columns: a terminal writes each row as a record
    /// (its first cell as a title, then one `header  value` line per cell),
    /// other formats as a table.
    Records(Grid),
    /// Footnotes: marker number and text.
    Notes(Vec<(usize, String)>),
}

/// `suite default · complete · started 2026-11-22 06:33:01 UTC · 12 scenarios × 6 trials`.
pub(crate) fn run_line(run: &RunRecord, scenarios: usize, trials: u32) -> String {
    format!(
        "{} · {scenarios} scenarios × {trials} trials",
        run_identity(run)
    )
}

/// `suite default · complete · started 2026-11-22 06:33:01 UTC`.
pub(crate) fn run_identity(run: &RunRecord) -> String {
    format!(
        "suite {} · {} · started {} UTC",
        run.suite,
        run.status,
        units::utc(run.started_at_unix_ms)
    )
}

/// Where the run was measured: CPU, kernel, pinning and generator backend.
pub(crate) fn machine_line(run: &RunRecord) -> String {
    let p = &run.provenance;
    format!(
        "{} ({} CPUs), Linux {}; server on CPU {}, generator on CPU {} ({})",
        p.cpu_model, p.cpu_count, p.kernel, p.server_cpus, p.generator_cpus, p.load_backend
    )
}

/// Scenario indices grouped by workload and schedule, in plan order.
pub(crate) fn groups(scenarios: &[ScenarioAnalysis]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, s) in scenarios.iter().enumerate() {
        let same = |g: &&mut Vec<usize>| same_group(&scenarios[g[0]], s);
        match groups.iter_mut().find(|g| same(g)) {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

fn same_group(a: &ScenarioAnalysis, b: &ScenarioAnalysis) -> bool {
    let (a, b) = (&a.scenario, &b.scenario);
    if a.program.is_some() || b.program.is_some() {
        return a.program.is_some() && b.program.is_some() && a.target == b.target;
    }
    a.workload.name == b.workload.name && a.schedule() == b.schedule()
}

/// `plaintext · GET /plaintext · closed loop, c=64`.
pub(crate) fn group_heading(s: &ScenarioAnalysis) -> String {
    if s.scenario.program.is_some() {
        return program::program_heading(s);
    }
    let w = &s.scenario.workload;
    let beside = w.background.as_ref().map_or_else(String::new, |b| {
        let plural = if b.streams == 1 { "" } else { "s" };
        format!(
            " · beside GET {} on {} stream{plural} per connection",
            b.path, b.streams
        )
    });
    format!(
        "{} · {} {} · {}{beside}",
        w.name,
        w.method,
        w.path,
        schedule_text(s)
    )
}

pub(crate) fn schedule_text(s: &ScenarioAnalysis) -> String {
    if s.scenario.workload.idle {
        return format!(
            "{} idle connections, each answered once (RSS once settled)",
            s.scenario.connections
        );
    }
    let wire = s.scenario.schedule().wire_text();
    match s.scenario.schedule {
        ScheduleKind::Closed => format!("closed loop, c={}{wire}", s.scenario.connections),
        ScheduleKind::Open { rate_per_s } => format!(
            "open loop at {} req/s, c={}{wire}",
            units::thousands(rate_per_s),
            s.scenario.connections
        ),
    }
}

/// `31.23k ± 2%`, `31.23k (n<6)` or `0.00% [0.00%, 0.02%]`.
pub(crate) fn center_and_ci(metric: Metric, s: &MetricSummary) -> String {
    units::summary(s, |v| units::value(metric, v))
}

/// `30.1k…32.0k` (three significant digits: a range is for orientation).
pub(crate) fn range(metric: Metric, s: &MetricSummary) -> String {
    let value = |v: f64| match metric.unit() {
        corobench_model::MetricUnit::PerSecond => units::si3(v),
        _ => units::value(metric, v),
    };
    format!("{}…{}", value(s.min), value(s.max))
}

/// Every compared metric, except an error rate that is 0 on both sides.
pub(crate) fn shown_comparisons(
    metrics: &[MetricComparison],
) -> impl Iterator<Item = &MetricComparison> {
    metrics.iter().filter(|m| {
        let zero_both = m.baseline == 0.0 && m.value == 0.0;
        !(zero_both && matches!(m.metric, Metric::ErrorRate | Metric::Program(_)))
    })
}

/// `+12.34% (p=0.002 n=6+6)` or `~ (p=0.180 n=6)`, toned by the verdict.
pub(crate) fn delta_cell(m: &MetricComparison) -> Cell {
    Cell::toned(
        format!("{} ({})", m.delta_text, m.note_text),
        verdict_tone(m),
    )
}

/// Green for an improvement, red for a regression, plain otherwise.
pub(crate) fn verdict_tone(m: &MetricComparison) -> Tone {
    match m.verdict {
        Verdict::Improved => Tone::Improved,
        Verdict::Regressed => Tone::Regressed,
        Verdict::NoDifference | Verdict::Undefined => Tone::Plain,
    }
}
