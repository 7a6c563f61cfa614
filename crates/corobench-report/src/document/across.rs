//! Claims across machine kinds: one row per claim, one column per kind
//! with that kind's verdict and measured ratio, and the summary across them.

use corobench_model::{ClaimAcrossMachines, ClaimsAcrossMachines, SuiteClaims};

use super::{Align, Block, Cell, Grid, Tone, outcome_tone};

/// `corobench claims`: every suite that states claims, with each claim's
/// verdict on every machine kind that ran it.
pub(crate) fn claims_document(evidence: &ClaimsAcrossMachines) -> Vec<Block> {
    let mut blocks = vec![
        Block::Title("Published claims across machine kinds".to_owned()),
        Block::Line(EXPLAIN.to_owned()),
    ];
    for suite in evidence.suites.iter().filter(|s| !s.claims.is_empty()) {
        blocks.push(Block::Heading(format!("Suite {}", suite.suite)));
        blocks.push(Block::Line(runs_line(suite)));
        blocks.push(Block::Records(across_grid(suite)));
    }
    blocks
}

/// What the table shows, for a reader who meets it first.
pub(crate) const EXPLAIN: &str = "A machine kind is a CPU model, a CPU count and a kernel family \
    (major.minor). Each kind's newest complete run of a suite is judged on its own, exactly as \
    its report judges it; the summary counts the kinds where the claim was consistent and names \
    the others. — marks a kind whose run did not state the claim.";

/// `runs: 20261127-124609-f82d on AMD EPYC, 2 CPUs, Linux 6.18`.
pub(crate) fn runs_line(suite: &SuiteClaims) -> String {
    let runs: Vec<String> = suite
        .runs
        .iter()
        .map(|r| format!("{} on {}", r.run_id, r.machine.label))
        .collect();
    format!("runs: {}", runs.join("; "))
}

/// One row per claim: the claim, what was claimed, one cell per machine
/// kind of the suite, and the summary.
pub(crate) fn across_grid(suite: &SuiteClaims) -> Grid {
    let mut columns = vec![("claim", Align::Left), ("claimed", Align::Left)];
    columns.extend(
        suite
            .runs
            .iter()
            .map(|r| (r.machine.label.as_str(), Align::Left)),
    );
    columns.push(("across machine kinds", Align::Left));
    let mut grid = Grid::new(&columns);
    for claim in &suite.claims {
        grid.rows.push(row(claim));
    }
    grid
}

fn row(claim: &ClaimAcrossMachines) -> Vec<Cell> {
    let mut cells = vec![
        Cell::plain(&claim.claim.says),
        Cell::plain(&claim.claimed_text),
    ];
    cells.extend(claim.verdicts.iter().map(|v| match &v.verdict {
        Some(verdict) => Cell::toned(
            verdict_cell(&verdict.verdict_text, &verdict.ratio_text),
            outcome_tone(verdict.outcome),
        ),
        None => Cell::plain("—"),
    }));
    let summary_tone = if claim.differs {
        Tone::Warning
    } else {
        Tone::Plain
    };
    cells.push(Cell::toned(&claim.summary, summary_tone));
    cells
}

/// `refuted (lower), 1.81× [1.43, 2.75]`; the verdict alone without a ratio.
pub(crate) fn verdict_cell(verdict: &str, ratio: &str) -> String {
    if ratio == "—" {
        verdict.to_owned()
    } else {
        format!("{verdict}, {ratio}")
    }
}
