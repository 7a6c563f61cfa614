//! The scenarios' on-CPU profiles as lines of text: which scenario has one
//! and how to draw it, or why it has none. The flame graphs themselves are
//! drawn by the HTML page and by `corobench report --flamegraph`.

use corobench_model::{ProfileOutcome, ProfileRecord, RunAnalysis};

use super::Block;

/// A heading and a line per profiled scenario; nothing for a run without profiles.
pub(crate) fn profile_blocks(analysis: &RunAnalysis) -> Vec<Block> {
    let Some(first) = analysis.profiles.first() else {
        return Vec::new();
    };
    let mut blocks = vec![Block::Heading(format!(
        "profiles · on-CPU stacks of each scenario's server (perf record -F {} -g, one extra \
         trial not counted in the figures)",
        first.frequency_hz
    ))];
    for profile in &analysis.profiles {
        let key = profile_key(analysis, profile);
        blocks.push(Block::Line(match &profile.outcome {
            ProfileOutcome::Captured { samples, .. } => format!(
                "{key}: {samples} samples; flame graph: corobench report {} --flamegraph {key} \
                 -o flame.svg (or --format html)",
                analysis.run.id
            ),
            ProfileOutcome::Skipped { reason } => format!("{key}: no profile: {reason}"),
        }));
    }
    blocks
}

/// The key of the profiled scenario, as reports show it.
pub(crate) fn profile_key(analysis: &RunAnalysis, profile: &ProfileRecord) -> String {
    analysis
        .scenarios
        .iter()
        .find(|s| s.scenario.index == profile.scenario_index)
        .map_or_else(
            || format!("scenario {}", profile.scenario_index),
            |s| s.scenario.key.to_string(),
        )
}
