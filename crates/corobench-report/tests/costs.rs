//! What a request costs the kernel, as the table shows it: syscalls/req and
//! the CPU split beside req/s in the compact view, every cost in detail.

use corobench_model::{Cost, Metric, PerRequest, RunAnalysis};
use corobench_report::{Format, RenderOptions, render_with};

/// The fixture run, its first scenario given a syscalls/req figure (the
/// fixture's trials were stored before corobench counted system calls).
fn analysis_with_syscalls() -> RunAnalysis {
    let mut analysis: RunAnalysis =
        serde_json::from_str(include_str!("fixtures/run-analysis.json")).unwrap();
    let scenario = &mut analysis.scenarios[0];
    let mut summary = scenario.metrics[&Metric::RequestsPerS].clone();
    (summary.median, summary.min, summary.max) = (2.5, 2.4, 2.6);
    summary.ci_text = "4%".to_owned();
    let syscalls = Metric::PerRequest(PerRequest::server(Cost::Syscalls));
    scenario.metrics.insert(syscalls, summary);
    analysis
}

fn table(detail: bool) -> String {
    let options = RenderOptions {
        detail,
        ..RenderOptions::default()
    };
    let mut out = Vec::new();
    render_with(Format::Table, &analysis_with_syscalls(), options, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_compact_table_shows_syscalls_and_the_cpu_split_beside_req_s() {
    let text = table(false);
    let header = text.lines().find(|l| l.starts_with("scenario ")).unwrap();
    let columns: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        &columns[..9],
        [
            "scenario",
            "req/s",
            "range",
            "n",
            "syscalls/req",
            "user",
            "µs/req",
            "sys",
            "µs/req"
        ],
        "{header}"
    );
    let row = text.lines().find(|l| l.starts_with("go-nethttp ")).unwrap();
    assert!(row.contains(" 2.50 "), "{row}");
    assert!(!text.contains("server per request"), "{text}");
}

#[test]
fn the_detailed_table_shows_every_cost_with_its_interval() {
    let text = table(true);
    assert!(text.contains("server per request"), "{text}");
    assert!(text.contains("2.50 ± 4%"), "{text}");
    assert!(text.contains("generator per request"), "{text}");
}
