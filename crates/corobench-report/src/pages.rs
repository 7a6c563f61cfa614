//! Results pages in Markdown: a page per suite (its claims across machine
//! kinds above each kind's report), an index of every suite and claim with
//! one column per machine kind, and the table of which suite has runs from
//! which kind. `corobench pages` writes them; nothing here computes.

use std::io::Write;

use corobench_model::{
    ClaimAcrossMachines, ClaimOutcome, ClaimsAcrossMachines, MachineKind, MachineRun, RunAnalysis,
    SuiteClaims,
};

use crate::ReportError;
use crate::document::{self, Align, Block};
use crate::markdown::{self, cell, escape, link, write_table};
use crate::units;

/// One machine kind's run of a suite, ready to show.
#[derive(Clone, Copy, Debug)]
pub struct MachineReport<'a> {
    pub run: &'a MachineRun,
    pub analysis: &'a RunAnalysis,
}

/// The file name of a suite's HTML report on one machine kind, beside its page.
#[must_use]
pub fn html_page_name(suite: &str, machine: &MachineKind) -> String {
    format!("{suite}.{}.html", machine.slug)
}

/// The file name of a suite's page.
#[must_use]
pub fn suite_page_name(suite: &str) -> String {
    format!("{suite}.md")
}

/// A suite's page: its runs, its claims across machine kinds, then each
/// kind's report (the `--format md` report, its headings two levels down).
///
/// # Errors
/// When `out` cannot be written.
pub fn write_suite_page(
    suite: &SuiteClaims,
    reports: &[MachineReport<'_>],
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    writeln!(out, "# {}\n", escape(&suite.suite))?;
    writeln!(out, "{}\n", escape(GENERATED))?;
    let rows: Vec<Vec<String>> = reports
        .iter()
        .map(|r| {
            let html = html_page_name(&suite.suite, &r.run.machine);
            vec![
                cell(&r.run.machine.label),
                cell(&r.run.run_id),
                cell(&units::utc(r.run.started_at_unix_ms)),
                link("HTML report", &html),
            ]
        })
        .collect();
    let header = ["machine kind", "run", "started (UTC)", "charts"].map(String::from);
    write_table(&header, &[Align::Left; 4], &rows, out)?;
    if !suite.claims.is_empty() {
        writeln!(out, "## Published claims across machine kinds\n")?;
        writeln!(out, "{}\n", escape(document::across::EXPLAIN))?;
        markdown::write(&[Block::Grid(document::across::across_grid(suite))], out)?;
    }
    for report in reports {
        writeln!(out, "## {}\n", escape(&report.run.machine.label))?;
        markdown::write_nested(&document::run_document(report.analysis), 2, out)?;
    }
    out.flush()?;
    Ok(())
}

const GENERATED: &str = "Generated from stored runs: the newest complete run of this suite on \
    each machine kind, judged on its own.";

/// The index: each kind's tally, the runs by suite and kind, every claim
/// with one column per kind, the verdicts that differ between kinds and
/// the claims a kind could not measure. `suites` are the suites expected
/// (those without any run are listed as missing).
///
/// # Errors
/// When `out` cannot be written.
pub fn write_results_index(
    evidence: &ClaimsAcrossMachines,
    suites: &[String],
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    writeln!(out, "# Results by suite and machine kind\n")?;
    writeln!(out, "{}\n", escape(INDEX))?;
    for machine in &evidence.machines {
        writeln!(out, "- {}", escape(&tally_line(evidence, machine)))?;
    }
    writeln!(out, "\n## Runs\n")?;
    runs_table(evidence, suites, true, out)?;
    writeln!(out, "## Every published claim\n")?;
    claims_table(evidence, out)?;
    differing(evidence, out)?;
    not_measured(evidence, out)?;
    out.flush()?;
    Ok(())
}

const INDEX: &str = "Every page is generated from stored runs: each suite's newest complete \
    run on each machine kind, judged on its own. A machine kind is a CPU model, a CPU count and \
    a kernel family (major.minor); verdicts of different kinds stand side by side and are \
    never pooled.";

/// Which suite has runs from which machine kind, and what is missing.
///
/// # Errors
/// When `out` cannot be written.
pub fn write_runs_table(
    evidence: &ClaimsAcrossMachines,
    suites: &[String],
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    writeln!(out, "# Runs by suite and machine kind\n")?;
    writeln!(
        out,
        "{}\n",
        escape(
            "Each cell is the newest complete run of the suite on that machine kind (CPU model, \
             CPU count, kernel major.minor); — marks a kind with no run of it."
        )
    )?;
    runs_table(evidence, suites, false, out)?;
    writeln!(out, "## Missing\n")?;
    let missing = missing_runs(evidence, suites);
    if missing.is_empty() {
        writeln!(
            out,
            "Nothing: every suite has a run from every machine kind."
        )?;
    }
    for line in missing {
        writeln!(out, "- {}", escape(&line))?;
    }
    out.flush()?;
    Ok(())
}

/// The suites given, each in its row, then any other suite with runs.
fn ordered<'a>(evidence: &'a ClaimsAcrossMachines, suites: &'a [String]) -> Vec<&'a str> {
    let mut names: Vec<&str> = suites.iter().map(String::as_str).collect();
    for suite in &evidence.suites {
        if !names.contains(&suite.suite.as_str()) {
            names.push(&suite.suite);
        }
    }
    names
}

fn find<'a>(evidence: &'a ClaimsAcrossMachines, suite: &str) -> Option<&'a SuiteClaims> {
    evidence.suites.iter().find(|s| s.suite == suite)
}

fn runs_table(
    evidence: &ClaimsAcrossMachines,
    suites: &[String],
    linked: bool,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    let mut header = vec!["suite".to_owned()];
    header.extend(evidence.machines.iter().map(|m| cell(&m.label)));
    let rows: Vec<Vec<String>> = ordered(evidence, suites)
        .into_iter()
        .map(|name| {
            let found = find(evidence, name);
            let mut row = vec![match found {
                Some(_) if linked => link(name, &suite_page_name(name)),
                _ => cell(name),
            }];
            row.extend(evidence.machines.iter().map(|machine| {
                found
                    .and_then(|s| s.runs.iter().find(|r| r.machine == *machine))
                    .map_or("—".to_owned(), |r| cell(&r.run_id))
            }));
            row
        })
        .collect();
    write_table(&header, &vec![Align::Left; header.len()], &rows, out)?;
    Ok(())
}

/// `capacity-json: no run on any machine kind`, `x: no run on AMD EPYC, …`.
fn missing_runs(evidence: &ClaimsAcrossMachines, suites: &[String]) -> Vec<String> {
    ordered(evidence, suites)
        .into_iter()
        .filter_map(|name| {
            let Some(found) = find(evidence, name) else {
                return Some(format!("{name}: no run on any machine kind"));
            };
            let absent: Vec<&str> = evidence
                .machines
                .iter()
                .filter(|m| !found.runs.iter().any(|r| r.machine == **m))
                .map(|m| m.label.as_str())
                .collect();
            (!absent.is_empty()).then(|| format!("{name}: no run on {}", absent.join(" or ")))
        })
        .collect()
}

/// `AMD EPYC, 2 CPUs, Linux 6.18: 12 suites, 44 of 48 claims judged (11
/// consistent, …); 4 not measured there`.
fn tally_line(evidence: &ClaimsAcrossMachines, machine: &MachineKind) -> String {
    let suites = evidence
        .suites
        .iter()
        .filter(|s| s.runs.iter().any(|r| r.machine == *machine))
        .count();
    let outcomes: Vec<ClaimOutcome> = evidence
        .suites
        .iter()
        .flat_map(|s| &s.claims)
        .flat_map(|c| &c.verdicts)
        .filter(|v| v.machine == *machine)
        .filter_map(|v| v.verdict.as_ref().map(|v| v.outcome))
        .collect();
    let count = |o: ClaimOutcome| outcomes.iter().filter(|x| **x == o).count();
    let unmeasured = count(ClaimOutcome::NotMeasured);
    let parts: Vec<String> = [
        ClaimOutcome::Consistent,
        ClaimOutcome::Inconclusive,
        ClaimOutcome::RefutedHigher,
        ClaimOutcome::RefutedLower,
    ]
    .into_iter()
    .filter(|o| count(*o) > 0)
    .map(|o| format!("{} {}", count(o), o.text()))
    .collect();
    let mut line = format!(
        "{}: {suites} suite{}, {} of {} claims judged ({})",
        machine.label,
        if suites == 1 { "" } else { "s" },
        outcomes.len() - unmeasured,
        outcomes.len(),
        parts.join(", ")
    );
    if unmeasured > 0 {
        line.push_str(&format!("; {unmeasured} not measured there"));
    }
    line
}

fn claims_table(evidence: &ClaimsAcrossMachines, out: &mut dyn Write) -> Result<(), ReportError> {
    let mut header = ["suite", "claim", "claimed"].map(String::from).to_vec();
    header.extend(evidence.machines.iter().map(|m| cell(&m.label)));
    header.push("across machine kinds".to_owned());
    let mut rows = Vec::new();
    for suite in &evidence.suites {
        for claim in &suite.claims {
            let mut row = vec![
                link(&suite.suite, &suite_page_name(&suite.suite)),
                cell(&claim.claim.says),
                cell(&claim.claimed_text),
            ];
            row.extend(
                evidence
                    .machines
                    .iter()
                    .map(|machine| cell(&kind_cell(claim, machine))),
            );
            row.push(cell(&claim.summary));
            rows.push(row);
        }
    }
    write_table(&header, &vec![Align::Left; header.len()], &rows, out)?;
    Ok(())
}

/// The claim's verdict and ratio on one kind; `—` where the kind has no
/// run of the suite or its run did not state the claim.
fn kind_cell(claim: &ClaimAcrossMachines, machine: &MachineKind) -> String {
    claim
        .verdicts
        .iter()
        .find(|v| v.machine == *machine)
        .and_then(|v| v.verdict.as_ref())
        .map_or("—".to_owned(), |v| {
            document::across::verdict_cell(&v.verdict_text, &v.ratio_text)
        })
}

fn differing(evidence: &ClaimsAcrossMachines, out: &mut dyn Write) -> Result<(), ReportError> {
    if evidence.machines.len() < 2 {
        return Ok(());
    }
    writeln!(out, "## Verdicts that differ between machine kinds\n")?;
    let mut any = false;
    for suite in &evidence.suites {
        for claim in suite.claims.iter().filter(|c| c.differs) {
            any = true;
            let page = link(&suite.suite, &suite_page_name(&suite.suite));
            let text = escape(&format!("{}: {}", claim.claim.says, claim.summary));
            writeln!(out, "- {page}: {text}")?;
        }
    }
    if !any {
        writeln!(
            out,
            "None: every kind that measured a claim reached the same verdict."
        )?;
    }
    writeln!(out)?;
    Ok(())
}

fn not_measured(evidence: &ClaimsAcrossMachines, out: &mut dyn Write) -> Result<(), ReportError> {
    writeln!(out, "## Not measured, and why\n")?;
    let mut any = false;
    for suite in &evidence.suites {
        for claim in &suite.claims {
            for verdict in &claim.verdicts {
                let Some(v) = verdict
                    .verdict
                    .as_ref()
                    .filter(|v| v.outcome == ClaimOutcome::NotMeasured)
                else {
                    continue;
                };
                any = true;
                let page = link(&suite.suite, &suite_page_name(&suite.suite));
                let text = format!(
                    "{} (on {}): {}",
                    claim.claim.says, verdict.machine.label, v.why
                );
                writeln!(out, "- {page}: {}", escape(&text))?;
            }
        }
    }
    if !any {
        writeln!(
            out,
            "None: every claim was measured on every machine kind that ran its suite."
        )?;
    }
    Ok(())
}
