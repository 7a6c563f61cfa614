//! A run that aimed for a req/s precision (`until_ci`, or a `budget`) says
//! in its report which scenarios reached it: a note marks those that did
//! not, and a run where all did says so. The goal is the one recorded with
//! the run as it started.

use corobench_model::{Metric, PrecisionGoal, ScenarioAnalysis, WarningKind};

use super::precision::relative_half_width;
use super::warnings::{Found, Warnings};

/// Adds the goal's note, marking every scenario whose req/s interval is
/// wider than the goal (or unbounded). Programs have no req/s: left out.
pub(super) fn note_goal(
    goal: Option<PrecisionGoal>,
    scenarios: &mut [ScenarioAnalysis],
    notes: &mut Warnings,
) {
    let Some(goal) = goal else {
        return;
    };
    let percent = goal.fraction * 100.0;
    let short_message = short_of_goal(goal);
    let mut reached = 0;
    let mut measured = 0;
    for scenario in scenarios
        .iter_mut()
        .filter(|s| s.scenario.program.is_none())
    {
        measured += 1;
        let precision = scenario
            .metrics
            .get(&Metric::RequestsPerS)
            .and_then(relative_half_width);
        if precision.is_some_and(|width| width <= goal.fraction) {
            reached += 1;
            continue;
        }
        let key = scenario.scenario.key.as_str();
        let found = Found::new(WarningKind::WideCi, short_message.clone())
            .about(vec![Metric::RequestsPerS]);
        let index = notes.add_found(found, Some(key));
        if !scenario.warnings.contains(&index) {
            scenario.warnings.push(index);
        }
    }
    if measured > 0 && reached == measured {
        notes.add(
            WarningKind::WideCi,
            format!("every scenario's req/s interval is within ±{percent}% of its median, the run's goal."),
            None,
        );
    }
}

fn short_of_goal(goal: PrecisionGoal) -> String {
    let percent = goal.fraction * 100.0;
    let limit = goal.budget().map_or_else(
        || "in its maximum of trials".to_owned(),
        |budget| {
            format!(
                "in its {} budget or maximum of trials",
                humantime::format_duration(budget)
            )
        },
    );
    format!(
        "the req/s interval did not reach the run's goal of ±{percent}% {limit}: give the run \
         more time (`budget`) or longer windows"
    )
}
