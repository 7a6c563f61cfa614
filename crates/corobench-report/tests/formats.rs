//! Every output format rendered from one stored fixture run (and the
//! comparison of the fixture's two runs), as snapshots. The analysis
//! documents in tests/fixtures are what `corobench report --format json`
//! and `corobench compare --format json` print for the runs in
//! crates/corobench/tests/fixtures/report/runs.db; the binary's
//! `fixtures_are_current` test keeps them so. `claims.json` holds the
//! verdicts on published claims about the same run (from
//! crates/corobench/tests/fixtures/report/spec-a-claims.toml): the claims
//! snapshots render the fixture run with them. `capacity.json` is a
//! hand-made capacity analysis (no stored run searched capacity): searches
//! of the fixture's json-open workload ending estimated, at the generator's
//! limit and below the lowest rate; the capacity snapshots render the
//! fixture run with it, and with a scenario for each rate it tried.

use corobench_model::{
    CapacityAnalysis, CapacityRate, Metric, RunAnalysis, RunComparison, ScenarioAnalysis,
    ScheduleKind, TrialStatus,
};
use corobench_report::{Format, RenderOptions, render_comparison, render_with};

const ANALYSIS: &str = include_str!("fixtures/run-analysis.json");
const COMPARISON: &str = include_str!("fixtures/run-comparison.json");
const CLAIMS: &str = include_str!("fixtures/claims.json");
const CAPACITY: &str = include_str!("fixtures/capacity.json");

fn analysis() -> RunAnalysis {
    serde_json::from_str(ANALYSIS).expect("the fixture is a run analysis")
}

fn comparison() -> RunComparison {
    serde_json::from_str(COMPARISON).expect("the fixture is a run comparison")
}

/// The fixture run with its published claims judged.
fn analysis_with_claims() -> RunAnalysis {
    let mut analysis = analysis();
    analysis.claims = serde_json::from_str(CLAIMS).expect("the fixture holds claim verdicts");
    analysis.run.claims = analysis.claims.iter().map(|v| v.claim.clone()).collect();
    analysis
}

/// The fixture run with a capacity analysis, and a scenario for every
/// rate it tried that the run lacks: a copy of the search's scenario at
/// 1500 req/s, moved to the rate, with the rate's latency.
fn analysis_with_capacity() -> RunAnalysis {
    let mut analysis = analysis();
    let capacity: CapacityAnalysis =
        serde_json::from_str(CAPACITY).expect("the fixture is a capacity analysis");
    for search in &capacity.scenarios {
        let template = search
            .rates
            .iter()
            .find_map(|r| {
                analysis
                    .scenarios
                    .iter()
                    .find(|s| s.scenario.index == r.scenario_index)
            })
            .expect("every search has a scenario in the fixture run")
            .clone();
        for rate in &search.rates {
            if !analysis
                .scenarios
                .iter()
                .any(|s| s.scenario.index == rate.scenario_index)
            {
                analysis.scenarios.push(at_rate(&template, rate));
            }
        }
    }
    analysis.run.capacity = Some(capacity.settings.clone());
    analysis.capacity = Some(capacity);
    analysis
}

fn at_rate(template: &ScenarioAnalysis, rate: &CapacityRate) -> ScenarioAnalysis {
    let mut scenario = template.clone();
    let template_rate = template.scenario.schedule().rate_per_s().unwrap();
    let key = template.scenario.key.as_str().replacen(
        &format!("/rate={template_rate}/"),
        &format!("/rate={}/", rate.rate),
        1,
    );
    scenario.scenario.key = key.into();
    scenario.scenario.index = rate.scenario_index;
    scenario.scenario.schedule = ScheduleKind::Open {
        rate_per_s: rate.rate,
    };
    let latencies = [
        (Metric::LatencyP50Us, &rate.p50_us),
        (Metric::LatencyP99Us, &rate.p99_us),
        (Metric::LatencyP999Us, &rate.p999_us),
    ];
    for (metric, summary) in latencies {
        if let Some(summary) = summary {
            scenario.metrics.insert(metric, summary.clone());
        }
    }
    scenario
}

fn rendered(format: Format) -> String {
    rendered_with(format, &analysis(), RenderOptions::default())
}

fn rendered_with(format: Format, analysis: &RunAnalysis, options: RenderOptions) -> String {
    let mut out = Vec::new();
    render_with(format, analysis, options, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The lines of `text` from the first that starts with `from` up to the
/// first after it that starts with `until` (or the end).
fn section(text: &str, from: &str, until: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(from))
        .unwrap_or_else(|| panic!("no line starts with {from:?}"));
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with(until))
        .map_or(lines.len(), |i| start + 1 + i);
    lines[start..end].join("\n")
}

fn rendered_comparison(format: Format) -> String {
    let mut out = Vec::new();
    render_comparison(format, &comparison(), RenderOptions::default(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Dates, the commit corobench was built from and paths change whenever
/// the fixture is recorded again; nothing else should.
macro_rules! assert_redacted_snapshot {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", "[date]"),
            (r"commit: \S+", "commit: [commit]"),
            (r"(/[\w.+-]+)+/spec-[ab]\.toml", "[spec path]"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

/// By default the table compares req/s and p99 only.
#[test]
fn table() {
    assert_redacted_snapshot!("run.table", rendered(Format::Table));
}

/// `--detail` compares every metric, as the other formats do.
#[test]
fn table_in_detail() {
    let options = RenderOptions {
        detail: true,
        ..RenderOptions::default()
    };
    let text = rendered_with(Format::Table, &analysis(), options);
    assert_redacted_snapshot!("run.table-detail", text);
}

#[test]
fn table_in_colour_marks_only_significant_deltas() {
    let detail = RenderOptions {
        detail: true,
        ..RenderOptions::default()
    };
    let coloured = RenderOptions {
        color: true,
        ..detail
    };
    let text = rendered_with(Format::Table, &analysis_with_claims(), coloured);
    let plain = rendered_with(Format::Table, &analysis_with_claims(), detail);
    assert!(text.contains("\x1b[31m") && text.contains("\x1b[32m"));
    // Colour adds escape codes and nothing else.
    assert_eq!(without_escapes(&text), plain);
}

fn without_escapes(text: &str) -> String {
    text.split('\x1b')
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part
            } else {
                part.split_once('m').map_or(part, |(_, rest)| rest)
            }
        })
        .collect()
}

#[test]
fn markdown() {
    assert_redacted_snapshot!("run.md", rendered(Format::Markdown));
}

#[test]
fn csv() {
    assert_redacted_snapshot!("run.csv", rendered(Format::Csv));
}

/// One row per trial and metric is long: the snapshot keeps the head, and
/// the row count is checked against the analysis.
#[test]
fn csv_trials() {
    let text = rendered(Format::CsvTrials);
    let values: usize = analysis()
        .scenarios
        .iter()
        .flat_map(|s| &s.trials)
        .map(|t| t.values.len())
        .sum();
    assert_eq!(text.lines().count(), values + 1);
    let head: Vec<&str> = text.lines().take(20).collect();
    assert_redacted_snapshot!("run.csv-trials-head", head.join("\n"));
}

#[test]
fn gobench() {
    let text = rendered(Format::GoBench);
    let ok_trials = analysis()
        .scenarios
        .iter()
        .flat_map(|s| &s.trials)
        .filter(|t| t.status == TrialStatus::Ok)
        .count();
    assert_eq!(
        text.lines().filter(|l| l.starts_with("Benchmark")).count(),
        ok_trials
    );
    assert_redacted_snapshot!("run.gobench", text);
}

/// JSON is the analysis itself: rendering the fixture gives the fixture back.
#[test]
fn json_round_trips() {
    assert_eq!(rendered(Format::Json), ANALYSIS);
    let mut out = Vec::new();
    render_comparison(
        Format::Json,
        &comparison(),
        RenderOptions::default(),
        &mut out,
    )
    .unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), COMPARISON);
}

#[test]
fn html_outline() {
    let html = rendered(Format::Html);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        !html.contains("http://") || only_svg_namespace(&html),
        "the page fetches nothing"
    );
    assert_redacted_snapshot!("run.html-outline", outline(&html));
}

#[test]
fn comparison_table() {
    assert_redacted_snapshot!("compare.table", rendered_comparison(Format::Table));
}

#[test]
fn comparison_markdown() {
    assert_redacted_snapshot!("compare.md", rendered_comparison(Format::Markdown));
}

#[test]
fn comparison_csv() {
    assert_redacted_snapshot!("compare.csv", rendered_comparison(Format::Csv));
}

#[test]
fn comparisons_have_no_gobench_or_html_form() {
    for format in [Format::GoBench, Format::Html, Format::CsvTrials] {
        let mut out = Vec::new();
        let error = render_comparison(format, &comparison(), RenderOptions::default(), &mut out)
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("it can be as table, md, json, csv"),
            "{error}"
        );
        assert!(out.is_empty());
    }
}

/// Every figure in the Markdown table comes from the analysis: the req/s
/// cell of each scenario is its median with its interval text.
#[test]
fn tables_show_the_analysis_figures() {
    let md = rendered(Format::Markdown);
    for s in &analysis().scenarios {
        let rate = &s.metrics[&Metric::RequestsPerS];
        let cell = format!(
            "| {} | {} ± {} |",
            s.label.replace('_', "\\_"),
            corobench_report::units::si(rate.median),
            rate.ci_text
        );
        assert!(md.contains(&cell), "{cell}");
    }
}

#[test]
fn claims_table() {
    let text = rendered_with(
        Format::Table,
        &analysis_with_claims(),
        RenderOptions::default(),
    );
    let claims = section(&text, "Published claims", "plaintext · ");
    assert_redacted_snapshot!("claims.table", claims);
    // Above the usual tables, after the header.
    assert!(text.find("Published claims") < text.find("plaintext · GET"));
}

/// A finished run prints its table first and the verdicts last.
#[test]
fn claims_table_at_the_end_of_a_run() {
    let options = RenderOptions {
        claims_last: true,
        ..RenderOptions::default()
    };
    let text = rendered_with(Format::Table, &analysis_with_claims(), options);
    assert!(text.find("Notes") < text.find("Published claims"));
    let top = rendered_with(
        Format::Table,
        &analysis_with_claims(),
        RenderOptions::default(),
    );
    assert_eq!(
        section(&text, "Published claims", "\u{0}"),
        section(&top, "Published claims", "plaintext · ").trim_end()
    );
}

#[test]
fn claims_markdown() {
    let text = rendered_with(
        Format::Markdown,
        &analysis_with_claims(),
        RenderOptions::default(),
    );
    assert_redacted_snapshot!("claims.md", section(&text, "## Published claims", "## "));
}

/// The JSON document carries the verdicts, and they read back unchanged.
#[test]
fn claims_json() {
    let analysis = analysis_with_claims();
    let text = rendered_with(Format::Json, &analysis, RenderOptions::default());
    let back: RunAnalysis = serde_json::from_str(&text).unwrap();
    assert_eq!(back, analysis);
    assert_redacted_snapshot!(
        "claims.json",
        section(&text, "  \"claims\": [", "  \"metrics\": [")
    );
}

#[test]
fn claims_csv() {
    let text = rendered_with(
        Format::CsvClaims,
        &analysis_with_claims(),
        RenderOptions::default(),
    );
    assert_eq!(
        text.lines().count(),
        analysis_with_claims().claims.len() + 1
    );
    assert_redacted_snapshot!("claims.csv-claims", text);
    // A run without claims gives the header alone.
    assert_eq!(rendered(Format::CsvClaims).lines().count(), 1);
}

#[test]
fn claims_gobench() {
    let text = rendered_with(
        Format::GoBench,
        &analysis_with_claims(),
        RenderOptions::default(),
    );
    let comments = section(&text, "# published claims", "goos:");
    assert!(comments.lines().all(|l| l.starts_with('#')));
    assert_redacted_snapshot!("claims.gobench", comments);
    // benchstat sees the same results with or without them.
    let results = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(results(&text), results(&rendered(Format::GoBench)));
}

#[test]
fn claims_html() {
    let html = rendered_with(
        Format::Html,
        &analysis_with_claims(),
        RenderOptions::default(),
    );
    let start = html.find(r#"<h2 id="claims">"#).expect("a claims section");
    let end = html
        .find(r#"<h2 id="throughput">"#)
        .expect("the throughput section");
    assert!(start < end, "the claims come first");
    assert!(html.contains(r##"<a href="#claims">Published claims</a>"##));
    assert_redacted_snapshot!("claims.html-outline", outline(&html[start..end]));
}

fn only_svg_namespace(html: &str) -> bool {
    html.matches("http://").count() == html.matches("http://www.w3.org/2000/svg").count()
}

/// What a reader sees on the page, one line per text, without the chart
/// geometry: headings, prose, table cells, select options, and in charts
/// the titles, labels, values and legends (tick labels and tooltips left
/// out), then how many of each chart element the page draws.
fn outline(html: &str) -> String {
    let body = strip_between(
        &strip_between(html, "<style>", "</style>"),
        "<script>",
        "</script>",
    );
    let mut lines = Vec::new();
    let mut open: Vec<String> = Vec::new();
    for segment in body.split('<').skip(1) {
        let (tag, text) = segment.split_once('>').unwrap_or((segment, ""));
        let name = tag.split_whitespace().next().unwrap_or("");
        if let Some(closed) = name.strip_prefix('/') {
            if let Some(at) = open.iter().rposition(|t| t == closed) {
                open.truncate(at);
            }
        } else if !tag.ends_with('/') {
            open.push(name.to_owned());
        }
        let text = text.trim();
        let shown = matches!(
            open.last().map(String::as_str),
            Some(
                "h1" | "h2"
                    | "h3"
                    | "p"
                    | "th"
                    | "td"
                    | "li"
                    | "option"
                    | "summary"
                    | "label"
                    | "pre"
            )
        ) || (name == "text" && !tag.contains(r#"class="tick""#));
        if shown && !text.is_empty() && !name.starts_with('/') {
            lines.push(format!("{name}: {text}"));
        }
    }
    for element in ["svg", "polyline", "rect", "circle", "line", "select"] {
        let count = body.matches(&format!("<{element} ")).count();
        lines.push(format!("count {element}: {count}"));
    }
    lines.join("\n")
}

fn strip_between(text: &str, open: &str, close: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        out.push_str(&rest[..start]);
        rest = rest[start..]
            .find(close)
            .map_or("", |end| &rest[start + end + close.len()..]);
    }
    out.push_str(rest);
    out
}

#[test]
fn capacity_csv() {
    let analysis = analysis_with_capacity();
    let text = rendered_with(Format::CsvCapacity, &analysis, RenderOptions::default());
    let rates: usize = analysis
        .capacity
        .iter()
        .flat_map(|c| &c.scenarios)
        .map(|s| s.rates.len())
        .sum();
    assert_eq!(text.lines().count(), rates + 1);
    let columns = text.lines().next().unwrap().split(',').count();
    assert!(text.lines().all(|l| l.split(',').count() == columns));
    assert_redacted_snapshot!("capacity.csv-capacity", text);
    // A run that searched no capacity gives the header alone.
    assert_eq!(rendered(Format::CsvCapacity).lines().count(), 1);
}

#[test]
fn capacity_gobench() {
    let text = rendered_with(
        Format::GoBench,
        &analysis_with_capacity(),
        RenderOptions::default(),
    );
    let capacity = section(&text, "# capacity", "\u{0}");
    assert_redacted_snapshot!("capacity.gobench", capacity);
    // Only an estimated capacity is a result line; the rest are comments.
    let results: Vec<&str> = capacity.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(results.len(), 2, "{capacity}");
    assert!(
        results
            .iter()
            .all(|l| l.starts_with("BenchmarkCapacityJson-open/target="))
    );
    assert!(!rendered(Format::GoBench).contains("# capacity"));
}

#[test]
fn capacity_html() {
    let html = rendered_with(
        Format::Html,
        &analysis_with_capacity(),
        RenderOptions::default(),
    );
    let start = html
        .find(r#"<h2 id="capacity">"#)
        .expect("a capacity section");
    let end = html
        .find(r#"<h2 id="throughput">"#)
        .expect("the throughput section");
    assert!(start < end, "the capacity comes before the usual sections");
    assert!(html.contains(r##"<a href="#capacity">Capacity</a>"##));
    assert_redacted_snapshot!("capacity.html-outline", outline(&html[start..end]));
    assert!(!rendered(Format::Html).contains(r#"id="capacity""#));
}

/// An idle scenario sends no load: its table shows the memory it holds
/// with its interval, not a row of load columns that would all read "—".
#[test]
fn idle_scenarios_get_a_memory_table() {
    let mut analysis = analysis();
    for scenario in &mut analysis.scenarios {
        scenario.scenario.workload.idle = true;
        scenario
            .metrics
            .retain(|m, _| matches!(m, Metric::PeakRssBytes | Metric::ServerCpuPct));
    }
    let text = rendered_with(Format::Markdown, &analysis, RenderOptions::default());
    let heading = text
        .lines()
        .find(|l| l.starts_with("## ") && l.contains("idle connections"))
        .unwrap_or_else(|| panic!("no idle heading in\n{text}"));
    let table = section(&text, heading, "## ");
    let header = table
        .lines()
        .find(|l| l.starts_with("| scenario"))
        .unwrap_or_else(|| panic!("no table under {heading}:\n{table}"));
    assert!(
        header.contains("| RSS |") && header.contains("| CPU |"),
        "{header}"
    );
    for load_column in ["req/s", "p99", "err"] {
        assert!(!header.contains(load_column), "{load_column} in {header}");
    }
    let first = &analysis.scenarios[0];
    let rss = &first.metrics[&Metric::PeakRssBytes];
    let row = table
        .lines()
        .find(|l| l.starts_with(&format!("| {} |", first.label)))
        .unwrap_or_else(|| panic!("no row of {} in\n{table}", first.label));
    assert!(
        row.contains(&rss.ci_text),
        "{row} lacks the interval {}",
        rss.ci_text
    );
}
