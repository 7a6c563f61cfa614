//! The report's tables (the same blocks as the terminal and Markdown
//! reports) and the provenance, as HTML.

use std::fmt::Write as _;

use corobench_model::RunAnalysis;

use super::svg::escape;
use crate::document::{Align, Block, Grid, Tone};
use crate::units;

/// The tables and footnotes of the run report; titles and lines are left
/// to the page header.
pub(crate) fn blocks(blocks: &[Block]) -> String {
    let mut html = String::new();
    for block in blocks {
        match block {
            Block::Title(_) | Block::Line(_) => {}
            Block::Heading(text) => {
                let _ = write!(html, "<h3>{}</h3>", escape(text));
            }
            Block::Grid(grid) | Block::Records(grid) => html.push_str(&table(grid)),
            Block::Notes(notes) if notes.is_empty() => {}
            Block::Notes(notes) => {
                html.push_str(r#"<h2 id="warnings">Warnings</h2><ol class="notes">"#);
                for (marker, text) in notes {
                    let _ = write!(html, r#"<li id="note-{marker}">{}</li>"#, escape(text));
                }
                html.push_str("</ol>");
            }
        }
    }
    html
}

/// One grid as an HTML table.
pub(crate) fn table(grid: &Grid) -> String {
    let class = |a: &Align| match a {
        Align::Left => "",
        Align::Right => r#" class="num""#,
    };
    let mut html = String::from("<table><thead><tr>");
    for (header, align) in grid.header.iter().zip(&grid.align) {
        let _ = write!(html, "<th{}>{}</th>", class(align), escape(header));
    }
    html.push_str("</tr></thead><tbody>");
    for row in &grid.rows {
        html.push_str("<tr>");
        for (cell, align) in row.iter().zip(&grid.align) {
            let tone = match cell.tone {
                Tone::Plain => "",
                Tone::Improved => "improved",
                Tone::Regressed => "regressed",
                Tone::Warning => "flag",
            };
            let classes = [if *align == Align::Right { "num" } else { "" }, tone]
                .iter()
                .filter(|c| !c.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            let attr = if classes.is_empty() {
                String::new()
            } else {
                format!(r#" class="{classes}""#)
            };
            let detail = cell
                .detail
                .as_ref()
                .map(|d| format!(r#"<br><span class="detail">{}</span>"#, escape(d)))
                .unwrap_or_default();
            let _ = write!(html, "<td{attr}>{}{detail}</td>", escape(&cell.text));
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table>");
    html
}

/// Where, when and with what the run was measured, and its spec.
pub(crate) fn provenance(analysis: &RunAnalysis) -> String {
    let run = &analysis.run;
    let p = &run.provenance;
    let mut rows: Vec<(String, String)> = vec![
        ("run".into(), run.id.clone()),
        ("suite".into(), run.suite.clone()),
        ("status".into(), run.status.to_string()),
        ("started (UTC)".into(), units::utc(run.started_at_unix_ms)),
        (
            "finished (UTC)".into(),
            run.finished_at_unix_ms.map_or("—".into(), units::utc),
        ),
        ("trial order seed".into(), run.seed.to_string()),
        (
            "spec file".into(),
            p.spec_path
                .clone()
                .unwrap_or_else(|| "the embedded default suite".into()),
        ),
        ("corobench".into(), p.corobench_version.clone()),
        (
            "corobench commit".into(),
            p.corobench_commit.clone().unwrap_or_else(|| "—".into()),
        ),
        ("host".into(), p.hostname.clone()),
        ("OS".into(), p.os.clone()),
        ("kernel".into(), p.kernel.clone()),
        (
            "CPU".into(),
            format!("{} ({} CPUs)", p.cpu_model, p.cpu_count),
        ),
        ("memory".into(), units::bytes(p.memory_bytes as f64)),
        ("server CPUs".into(), p.server_cpus.clone()),
        ("generator CPUs".into(), p.generator_cpus.clone()),
        ("load generator backend".into(), p.load_backend.clone()),
    ];
    rows.extend(
        p.tool_versions
            .iter()
            .map(|(k, v)| (format!("tool: {k}"), v.clone())),
    );
    rows.extend(
        p.target_sources
            .iter()
            .map(|(k, v)| (format!("sources: {k}"), v.clone())),
    );
    let mut html = String::from(r#"<table class="provenance"><tbody>"#);
    for (key, value) in rows {
        let _ = write!(
            html,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(&key),
            escape(&value)
        );
    }
    html.push_str("</tbody></table>");
    let _ = write!(
        html,
        "<details><summary>spec as run</summary><pre>{}</pre></details>",
        escape(&run.spec_toml)
    );
    html
}
