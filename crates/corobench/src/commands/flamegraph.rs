//! `corobench report RUN --flamegraph SCENARIO`: one scenario's stored
//! on-CPU profile drawn as a flame graph (SVG), for formats that cannot
//! show one and for sharing it on its own.

use std::path::Path;

use corobench_model::{ProfileOutcome, StoredRun};
use corobench_profile::{FoldedStacks, flame_graph_svg};

use super::shared::write_output;
use crate::exit;

/// Writes the flame graph of the scenario whose key is `key` to `output`
/// (stdout when `None`).
///
/// # Errors
/// An unknown scenario, one without a profile (exit 2, with the reason and
/// the scenarios that have one), or an output that cannot be written.
pub(super) fn write(stored: &StoredRun, key: &str, output: Option<&Path>) -> anyhow::Result<()> {
    let profiled = || {
        let keys: Vec<String> = stored
            .profiles
            .iter()
            .filter(|p| p.folded_stacks().is_some())
            .filter_map(|p| stored.scenarios.get(p.scenario_index as usize))
            .map(|s| s.key.to_string())
            .collect();
        if keys.is_empty() {
            format!(
                "run {} has no profile; take them with `corobench run --profile`",
                stored.run.id
            )
        } else {
            format!("scenarios with a profile: {}", keys.join(", "))
        }
    };
    let Some(scenario) = stored.scenarios.iter().find(|s| s.key.to_string() == key) else {
        return Err(exit::usage(format!(
            "--flamegraph {key}: run {} has no such scenario; {}",
            stored.run.id,
            profiled()
        )));
    };
    let profile = stored
        .profiles
        .iter()
        .find(|p| p.scenario_index == scenario.index);
    let stacks = match profile.map(|p| &p.outcome) {
        Some(ProfileOutcome::Captured {
            samples,
            folded_stacks,
        }) => FoldedStacks {
            text: folded_stacks.clone(),
            samples: *samples,
        },
        Some(ProfileOutcome::Skipped { reason }) => {
            return Err(exit::usage(format!(
                "--flamegraph {key}: the scenario has no profile: {reason}"
            )));
        }
        None => {
            return Err(exit::usage(format!(
                "--flamegraph {key}: the scenario was not profiled; {}",
                profiled()
            )));
        }
    };
    let svg = flame_graph_svg(&stacks, key).map_err(|e| anyhow::anyhow!("{key}: {e}"))?;
    write_output(output, |out| Ok(out.write_all(svg.as_bytes())?))
}
