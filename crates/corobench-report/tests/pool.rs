//! What the targets' database pools counted, as the reports show it: a
//! table of the pool figures for the scenarios that have them, none else.

use corobench_model::{Metric, PoolFigure, RunAnalysis};
use corobench_report::{Format, RenderOptions, render_with};

fn fixture() -> RunAnalysis {
    serde_json::from_str(include_str!("fixtures/run-analysis.json")).unwrap()
}

/// The fixture run, its first scenario given a pool reuse of 99.5% and a
/// mean checkout wait of 1.2 ms.
fn analysis_with_a_pool() -> RunAnalysis {
    let mut analysis = fixture();
    let scenario = &mut analysis.scenarios[0];
    let summary = |median: f64| {
        let mut summary = scenario.metrics[&Metric::RequestsPerS].clone();
        (summary.median, summary.min, summary.max) = (median, median, median);
        summary.ci_text = "1%".to_owned();
        summary
    };
    let (reuse, wait) = (summary(0.995), summary(1_200.0));
    scenario
        .metrics
        .insert(Metric::Pool(PoolFigure::Reuse), reuse);
    scenario
        .metrics
        .insert(Metric::Pool(PoolFigure::AcquireWait), wait);
    analysis
}

fn rendered(format: Format, analysis: &RunAnalysis) -> String {
    let mut out = Vec::new();
    render_with(format, analysis, RenderOptions::default(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_pool_figures_a_target_reports_get_a_table() {
    let text = rendered(Format::Markdown, &analysis_with_a_pool());
    let header = text
        .lines()
        .find(|l| l.starts_with("| database pool"))
        .unwrap_or_else(|| panic!("no pool table in:\n{text}"));
    assert_eq!(header, "| database pool | pool reuse | pool wait |");
    let row = text
        .lines()
        .skip_while(|l| !l.starts_with("| database pool"))
        .find(|l| l.starts_with("| go-nethttp"))
        .unwrap();
    assert!(row.contains("99.50%") && row.contains("1.20ms"), "{row}");
}

#[test]
fn no_pool_no_table() {
    let text = rendered(Format::Markdown, &fixture());
    assert!(!text.contains("database pool"), "{text}");
}
