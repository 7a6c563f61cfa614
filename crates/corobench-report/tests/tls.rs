//! What TLS cost the connections, as the reports show it: a table of the
//! TLS figures for the scenarios that spoke TLS, none for a run in
//! cleartext.

use corobench_model::{Metric, RunAnalysis, TlsFigure};
use corobench_report::{Format, RenderOptions, render_with};

fn fixture() -> RunAnalysis {
    serde_json::from_str(include_str!("fixtures/run-analysis.json")).unwrap()
}

/// The fixture run, its first scenario given a handshake p50 of 350 µs, a
/// p99 of 1.5 ms and 98% of its handshakes resumed.
fn analysis_over_tls() -> RunAnalysis {
    let mut analysis = fixture();
    let scenario = &mut analysis.scenarios[0];
    let summary = |median: f64| {
        let mut summary = scenario.metrics[&Metric::RequestsPerS].clone();
        (summary.median, summary.min, summary.max) = (median, median, median);
        summary.ci_text = "2%".to_owned();
        summary
    };
    let figures = [
        (TlsFigure::HandshakeP50, summary(350.0)),
        (TlsFigure::HandshakeP99, summary(1_500.0)),
        (TlsFigure::Resumed, summary(0.98)),
    ];
    for (figure, value) in figures {
        scenario.metrics.insert(Metric::Tls(figure), value);
    }
    analysis
}

fn rendered(format: Format, analysis: &RunAnalysis) -> String {
    let mut out = Vec::new();
    render_with(format, analysis, RenderOptions::default(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_tls_figures_get_a_table_in_the_text_report() {
    for format in [Format::Markdown, Format::Table] {
        let text = rendered(format, &analysis_over_tls());
        let header = text
            .lines()
            .find(|l| l.contains("TLS") && l.contains("handshake p50"))
            .unwrap_or_else(|| panic!("no TLS table in:\n{text}"));
        assert!(
            header.contains("handshake p99") && header.contains("resumed"),
            "{header}"
        );
        let row = text
            .lines()
            .skip_while(|l| !l.contains("handshake p50"))
            .find(|l| l.contains("go-nethttp"))
            .unwrap();
        assert!(
            row.contains("350") && row.contains("1.50ms") && row.contains("98.00%"),
            "{row}"
        );
    }
}

#[test]
fn a_run_in_cleartext_has_no_tls_table() {
    let text = rendered(Format::Markdown, &fixture());
    assert!(!text.contains("handshake"), "{text}");
}

#[test]
fn tls_figures_round_trip_through_their_ids() {
    for metric in Metric::TLS {
        assert_eq!(Metric::from_id(metric.id()), Some(metric));
        assert_eq!(Metric::from_word(metric.id()), Some(metric));
    }
}
