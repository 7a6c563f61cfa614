//! "Memory per connection": one line per target and idle workload, the
//! slope of settled RSS against idle connections with its interval.

use std::fmt::Write as _;

use corobench_model::RunAnalysis;

use super::svg::escape;
use crate::document::memory_line;

/// The section, or `None` for a run without idle workloads.
pub(super) fn memory_section(analysis: &RunAnalysis) -> Option<String> {
    if analysis.memory_per_connection.is_empty() {
        return None;
    }
    let mut html = format!(
        r#"<h2 id="memory">Memory per connection</h2><p class="explain">Each trial of an idle workload opens its number of keep-alive connections to a fresh server, each answered once, and reads the server tree's resident memory once it settles. The figure is the least-squares slope of that memory against the connections over every trial, with its {} interval.</p><ul class="memory">"#,
        crate::units::whole_pct(analysis.settings.confidence)
    );
    for fit in &analysis.memory_per_connection {
        let _ = write!(html, "<li>{}</li>", escape(&memory_line(fit)));
    }
    html.push_str("</ul>");
    Some(html)
}
