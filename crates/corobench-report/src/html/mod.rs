//! `--format html`: one self-contained page (inline CSS, SVG and a few lines
//! of JavaScript; nothing is fetched): the published claims' verdicts with
//! their measured ratios, the capacity of each searched scenario with
//! latency against offered rate, throughput with confidence
//! intervals, latency spectra, sweeps, CPU and memory over time, the tables
//! of the terminal report, warnings and provenance.

mod axes;
mod capacity;
mod charts;
mod claims;
mod latency_rate;
mod memory;
mod profiles;
mod resources;
mod svg;
mod sweeps;
mod tables;

use std::fmt::Write as _;
use std::io::{self, Write};

use corobench_model::RunAnalysis;

use crate::document::{self, group_heading, groups};
use svg::escape;

const STYLE: &str = r#"
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: #1d1d1f; background: #fff; margin: 0 auto; max-width: 1140px; padding: 24px 28px 60px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 8px; padding-top: 8px; border-top: 1px solid #ddd; }
h3 { font-size: 15px; margin: 22px 0 6px; }
p.meta { margin: 2px 0; color: #444; }
nav { margin: 14px 0 0; font-size: 13px; }
nav a { margin-right: 14px; color: #2d5d8f; text-decoration: none; }
.chart { display: block; margin: 4px 0 10px; max-width: 100%; height: auto; }
.chart text { font: 12px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; fill: #333; }
.chart .tick { fill: #555; }
.chart .axis-title { fill: #333; font-weight: 600; }
.chart .chart-title { font-weight: 600; }
.chart .value { fill: #222; }
.chart .grid { stroke: #e6e6e6; stroke-width: 1; }
.chart .axis { stroke: #777; stroke-width: 1; }
.chart .series { fill: none; stroke-width: 2; }
.chart .whisker { stroke-width: 1.5; }
table { border-collapse: collapse; margin: 4px 0 12px; font-size: 13px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: left; white-space: nowrap; }
thead th { border-bottom: 1px solid #bbb; color: #444; font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.improved { color: #1a7f37; font-weight: 600; }
.regressed { color: #c62828; font-weight: 600; }
.flag { color: #9a6700; }
p.callout { margin: 14px 0 0; padding: 8px 12px; background: #fff8e1; border-left: 4px solid #e0a800; }
td .detail { color: #777; font-size: 11px; font-weight: 400; }
ol.notes li { margin: 4px 0; }
table.provenance th { color: #444; font-weight: 600; }
label.switch { display: inline-block; margin: 6px 0; font-size: 13px; }
label.switch select { margin-left: 6px; font: inherit; max-width: 760px; }
.explain { color: #444; max-width: 900px; }
pre { background: #f6f6f6; padding: 10px; overflow: auto; }
img.flamegraph { display: block; max-width: 100%; height: auto; border: 1px solid #eee; }
"#;

/// Shows, for every `select[data-switch]`, the element of its group whose
/// `data-key` equals the selected value, and hides the others.
const SCRIPT: &str = r#"
(function () {
  for (const select of document.querySelectorAll('select[data-switch]')) {
    const group = select.dataset.switch;
    const show = function () {
      for (const el of document.querySelectorAll('[data-group="' + group + '"]')) {
        el.hidden = el.dataset.key !== select.value;
      }
    };
    select.addEventListener('change', show);
    show();
  }
  document.documentElement.dataset.ready = 'true';
})();
"#;

/// Writes the page.
pub(crate) fn write(analysis: &RunAnalysis, out: &mut dyn Write) -> io::Result<()> {
    let mut page = String::new();
    head(&mut page, analysis);
    body(&mut page, analysis);
    let _ = writeln!(page, "<script>{SCRIPT}</script></body></html>");
    out.write_all(page.as_bytes())
}

fn head(page: &mut String, analysis: &RunAnalysis) {
    let title = format!("corobench run {}", analysis.run.id);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        escape(&title)
    );
    let _ = write!(page, "<h1>{}</h1>", escape(&title));
    let lines = [
        document::run_line(
            &analysis.run,
            analysis.scenarios.len(),
            analysis.trials_per_scenario,
        ),
        document::machine_line(&analysis.run),
    ];
    for line in lines {
        let _ = write!(page, r#"<p class="meta">{}</p>"#, escape(&line));
    }
    let claims = if analysis.claims.is_empty() {
        ""
    } else {
        "<a href=\"#claims\">Published claims</a>"
    };
    let capacity = if analysis.capacity.is_none() {
        ""
    } else {
        "<a href=\"#capacity\">Capacity</a>"
    };
    let _ = write!(page, "<nav>{claims}{capacity}");
    let profiles = if analysis.profiles.is_empty() {
        ""
    } else {
        "<a href=\"#profiles\">Where the CPU goes</a>"
    };
    let _ = write!(
        page,
        "<a href=\"#throughput\">Throughput</a><a href=\"#latency\">Latency</a>\
         <a href=\"#sweeps\">Sweeps</a><a href=\"#resources\">CPU and memory</a>{profiles}\
         <a href=\"#tables\">Tables</a><a href=\"#warnings\">Warnings</a>\
         <a href=\"#provenance\">Provenance</a></nav>",
    );
    let count = analysis.warnings.len();
    if count > 0 {
        let noun = if count == 1 { "warning" } else { "warnings" };
        let _ = write!(
            page,
            r##"<p class="callout">{count} {noun} about these figures: read <a href="#warnings">them</a> before drawing conclusions.</p>"##
        );
    }
}

fn body(page: &mut String, analysis: &RunAnalysis) {
    if let Some(claims) = claims::claims_section(analysis) {
        page.push_str(&claims);
    }
    if let Some(capacity) = capacity::capacity_section(analysis) {
        page.push_str(&capacity);
    }
    let colors = label_colors(analysis);
    let sections = groups(&analysis.scenarios);
    let confidence = crate::units::whole_pct(analysis.settings.confidence);
    section(
        page,
        "throughput",
        "Throughput",
        &format!(
            "Median requests per second of each scenario's trials. Whiskers span the {confidence} \
         confidence interval of the median (missing when too few trials bound it); dots are \
         single trials."
        ),
    );
    for group in &sections {
        let heading = group_heading(&analysis.scenarios[group[0]]);
        let _ = write!(
            page,
            "<h3>{}</h3>{}",
            escape(&heading),
            charts::throughput(analysis, group, &colors)
        );
    }
    section(
        page,
        "latency",
        "Latency percentiles",
        "Every successful trial's latency histogram merged, read at each percentile. The curve ends where the sample is too small to resolve a finer percentile. In an open loop, latency counts from each request's intended send time; dashed lines count from the actual send.",
    );
    for group in &sections {
        if let Some(chart) = charts::spectrum(analysis, group, &colors) {
            let heading = group_heading(&analysis.scenarios[group[0]]);
            let _ = write!(page, "<h3>{}</h3>{chart}", escape(&heading));
        }
    }
    sweeps_section(page, analysis);
    server_sections(page, analysis);
    section(
        page,
        "tables",
        "Tables",
        &format!(
            "Medians of the trials; ± is the half-width of the {confidence} confidence interval of \
         the median; deltas compare each target with the baseline (Mann–Whitney U test, ~ when \
         p > {}). Superscripts refer to the warnings.",
            analysis.settings.alpha
        ),
    );
    let blocks = document::run_document_with(
        analysis,
        document::ComparisonLayout::Matrix,
        document::ClaimsPlace::Omit,
    );
    page.push_str(&tables::blocks(&blocks));
    section(
        page,
        "provenance",
        "Provenance",
        "Where, when and with what the run was measured.",
    );
    page.push_str(&tables::provenance(analysis));
}

/// What the server spent: CPU and memory over time, memory per
/// connection, and where its CPU went (the profiles).
fn server_sections(page: &mut String, analysis: &RunAnalysis) {
    section(
        page,
        "resources",
        "CPU and memory over time",
        "The target's whole process tree, sampled during the measured window of each scenario's representative trial (the one nearest the median req/s).",
    );
    match resources::resources_section(analysis) {
        Some(html) => page.push_str(&html),
        None => page.push_str("<p>No trial has a resource series.</p>"),
    }
    for html in [
        memory::memory_section(analysis),
        profiles::profiles_section(analysis),
    ]
    .into_iter()
    .flatten()
    {
        page.push_str(&html);
    }
}

fn section(page: &mut String, id: &str, title: &str, explain: &str) {
    let _ = write!(
        page,
        r#"<h2 id="{id}">{}</h2><p class="explain">{}</p>"#,
        escape(title),
        escape(explain)
    );
}

fn sweeps_section(page: &mut String, analysis: &RunAnalysis) {
    let labels = distinct_labels(analysis);
    section(
        page,
        "sweeps",
        "Sweeps",
        "Each metric against a parameter the run swept, one line per target and fixed setting; whiskers span the confidence intervals. Choose the metric above each chart.",
    );
    if analysis.sweeps.is_empty() {
        page.push_str("<p>This run sweeps no parameter.</p>");
    }
    for (k, sweep) in analysis.sweeps.iter().enumerate() {
        let _ = write!(
            page,
            "<h3>{} · {}</h3>{}",
            escape(&sweep.workload),
            escape(&sweep.dimension),
            sweeps::sweep_section(analysis, sweep, &format!("sweep-{k}"), &labels)
        );
    }
}

/// The scenario labels in order of first appearance: label i gets colour i.
fn distinct_labels(analysis: &RunAnalysis) -> Vec<&str> {
    let mut labels: Vec<&str> = Vec::new();
    for s in &analysis.scenarios {
        if !labels.contains(&s.label.as_str()) {
            labels.push(&s.label);
        }
    }
    labels
}

/// A palette index per scenario, so a target keeps its colour in every chart.
fn label_colors(analysis: &RunAnalysis) -> Vec<usize> {
    let labels = distinct_labels(analysis);
    analysis
        .scenarios
        .iter()
        .map(|s| labels.iter().position(|l| *l == s.label).unwrap_or(0))
        .collect()
}
