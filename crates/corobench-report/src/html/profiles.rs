//! "Where the CPU goes": each profiled scenario's flame graph, drawn by
//! inferno from the folded stacks in the store, as an image (inferno's SVG
//! carries its own script, which stays inside the image), or the reason the
//! scenario has no profile.

use std::fmt::Write as _;

use base64::Engine as _;
use corobench_model::{ProfileOutcome, ProfileRecord, RunAnalysis};
use corobench_profile::{FoldedStacks, flame_graph_svg};

use super::svg::escape;
use crate::document::profile_key;

/// The section, or `None` for a run without profiles.
pub(super) fn profiles_section(analysis: &RunAnalysis) -> Option<String> {
    let first = analysis.profiles.first()?;
    let mut html = format!(
        r#"<h2 id="profiles">Where the CPU goes</h2><p class="explain">On-CPU stacks of each scenario's server, sampled by <code>perf record -F {} -g</code> over its whole process tree during one extra trial after the measured ones (its figures are not counted). Each box is a function; its width is its share of the samples, its callers are below it.</p>"#,
        first.frequency_hz
    );
    for profile in &analysis.profiles {
        let key = profile_key(analysis, profile);
        let _ = write!(html, "<h3>{}</h3>{}", escape(&key), figure(&key, profile));
    }
    Some(html)
}

/// The flame graph as an `<img>`, or why there is none.
fn figure(key: &str, profile: &ProfileRecord) -> String {
    let (samples, folded) = match &profile.outcome {
        ProfileOutcome::Captured {
            samples,
            folded_stacks,
        } => (*samples, folded_stacks),
        ProfileOutcome::Skipped { reason } => {
            return format!("<p>No profile: {}</p>", escape(reason));
        }
    };
    let stacks = FoldedStacks {
        text: folded.clone(),
        samples,
    };
    match flame_graph_svg(&stacks, key) {
        Ok(svg) => format!(
            r#"<img class="flamegraph" alt="flame graph of {} ({samples} samples)" src="data:image/svg+xml;base64,{}">"#,
            escape(key),
            base64::engine::general_purpose::STANDARD.encode(svg)
        ),
        Err(e) => format!("<p>No flame graph: {}</p>", escape(&e.to_string())),
    }
}
