//! Claims across machine kinds and the results pages, as snapshots: the
//! fixture run (see formats.rs) with its claims judged, and the same run as
//! if measured again on another kind of machine, where two verdicts came
//! out otherwise.

use corobench_model::{ClaimOutcome, ClaimsAcrossMachines, RunAnalysis};
use corobench_report::{
    Format, MachineReport, RenderOptions, render_claims, write_results_index, write_runs_table,
    write_suite_page,
};

const ANALYSIS: &str = include_str!("fixtures/run-analysis.json");
const CLAIMS: &str = include_str!("fixtures/claims.json");

/// The fixture run with its claims judged (measured on an AMD EPYC).
fn measured_here() -> RunAnalysis {
    let mut analysis: RunAnalysis = serde_json::from_str(ANALYSIS).unwrap();
    analysis.claims = serde_json::from_str(CLAIMS).unwrap();
    analysis.run.claims = analysis.claims.iter().map(|v| v.claim.clone()).collect();
    analysis
}

/// The same suite run a day later on an Intel Xeon: the first claim
/// refuted there, the second inconclusive.
fn measured_elsewhere() -> RunAnalysis {
    let mut analysis = measured_here();
    analysis.run.id = "20261123-081500-9c1d".to_owned();
    analysis.run.started_at_unix_ms += 86_400_000;
    analysis.run.provenance.cpu_model = "Intel(R) Xeon(R) Processor".to_owned();
    analysis.run.provenance.kernel = "6.18.44-fc-v657".to_owned();
    let first = &mut analysis.claims[0];
    first.outcome = ClaimOutcome::RefutedHigher;
    first.verdict_text = ClaimOutcome::RefutedHigher.text().to_owned();
    first.ratio_text = "1.31× [1.22, 1.40]".to_owned();
    let second = &mut analysis.claims[1];
    second.outcome = ClaimOutcome::Inconclusive;
    second.verdict_text = ClaimOutcome::Inconclusive.text().to_owned();
    second.ratio_text = "3.70× [2.10, 5.90]".to_owned();
    analysis
}

fn evidence(analyses: &[RunAnalysis]) -> ClaimsAcrossMachines {
    corobench_analyze::claims_across_machines(analyses)
}

fn text(write: impl FnOnce(&mut Vec<u8>)) -> String {
    let mut out = Vec::new();
    write(&mut out);
    String::from_utf8(out).unwrap()
}

/// Dates change whenever the fixture is recorded again.
macro_rules! assert_redacted_snapshot {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", "[date]"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

#[test]
fn claims_across_machines_in_a_terminal() {
    let evidence = evidence(&[measured_here(), measured_elsewhere()]);
    let table = text(|out| {
        render_claims(Format::Table, &evidence, RenderOptions::default(), out).unwrap();
    });
    assert_redacted_snapshot!("across.table", table);
}

#[test]
fn claims_across_machines_in_markdown() {
    let evidence = evidence(&[measured_here(), measured_elsewhere()]);
    let markdown = text(|out| {
        render_claims(Format::Markdown, &evidence, RenderOptions::default(), out).unwrap();
    });
    assert_redacted_snapshot!("across.md", markdown);
}

#[test]
fn claims_across_machines_as_json_read_back_unchanged() {
    let evidence = evidence(&[measured_here(), measured_elsewhere()]);
    let json = text(|out| {
        render_claims(Format::Json, &evidence, RenderOptions::default(), out).unwrap();
    });
    let back: ClaimsAcrossMachines = serde_json::from_str(&json).unwrap();
    assert_eq!(back, evidence);
    assert!(json.contains("\"kind\": \"claims_across_machines\""));
    let error = render_claims(
        Format::Csv,
        &evidence,
        RenderOptions::default(),
        &mut Vec::new(),
    );
    assert!(error.is_err());
}

/// A suite's page: its runs and the table across machine kinds, then each
/// kind's report with its headings two levels down.
#[test]
fn a_suite_page_puts_the_claims_across_machines_above_each_report() {
    let analyses = [measured_here(), measured_elsewhere()];
    let evidence = evidence(&analyses);
    let suite = &evidence.suites[0];
    let reports: Vec<MachineReport<'_>> = suite
        .runs
        .iter()
        .map(|run| MachineReport {
            run,
            analysis: analyses.iter().find(|a| a.run.id == run.run_id).unwrap(),
        })
        .collect();
    let page = text(|out| write_suite_page(suite, &reports, out).unwrap());
    let top: String = page
        .lines()
        .take_while(|line| !line.starts_with("## AMD"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_redacted_snapshot!("page.top", top);
    let outline: Vec<&str> = page.lines().filter(|l| l.starts_with('#')).collect();
    assert_redacted_snapshot!("page.outline", outline.join("\n"));
    // Each kind's report is its own `report --format md`, nested.
    let mut alone = Vec::new();
    corobench_report::render(Format::Markdown, &analyses[0], &mut alone).unwrap();
    let alone = String::from_utf8(alone).unwrap();
    let nested = alone
        .replace("\n## ", "\n#### ")
        .replacen("# corobench", "### corobench", 1);
    assert!(page.contains(&nested), "the AMD report appears whole");
}

#[test]
fn the_index_has_one_column_per_machine_kind() {
    let evidence = evidence(&[measured_here(), measured_elsewhere()]);
    let suites = vec!["report-fixture".to_owned(), "capacity-json".to_owned()];
    let index = text(|out| write_results_index(&evidence, &suites, out).unwrap());
    assert_redacted_snapshot!("index.md", index);
}

#[test]
fn the_runs_table_says_what_is_missing() {
    let mut elsewhere = measured_elsewhere();
    elsewhere.run.suite = "another-suite".to_owned();
    let evidence = evidence(&[measured_here(), elsewhere]);
    let suites = vec!["report-fixture".to_owned(), "capacity-json".to_owned()];
    let table = text(|out| write_runs_table(&evidence, &suites, out).unwrap());
    assert_redacted_snapshot!("runs.md", table);
}
