//! The note on a run's req/s precision goal.

use corobench_model::WarningKind;

use crate::fixtures::RunBuilder;
use crate::{AnalyzeOptions, analyze_run};

const NARROW: [f64; 6] = [105.0, 100.0, 103.0, 101.0, 104.0, 102.0];
const WIDE: [f64; 6] = [70.0, 100.0, 130.0, 90.0, 110.0, 100.0];

#[test]
fn scenarios_short_of_a_budgeted_runs_goal_are_marked() {
    let run = RunBuilder::new("r1", 6)
        .goal(0.05, Some(300.0))
        .scenario("narrow", &[], "plaintext", 4)
        .rates(&NARROW)
        .scenario("wide", &[], "plaintext", 4)
        .rates(&WIDE)
        .build();
    let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
    let (index, note) = analysis
        .warnings
        .iter()
        .enumerate()
        .find(|(_, w)| w.message.contains("goal of ±5%"))
        .expect("a note on the goal");
    assert!(note.message.contains("5m budget"), "{}", note.message);
    assert_eq!(note.scenarios, ["wide/plaintext/c=4"]);
    assert!(analysis.scenarios[1].warnings.contains(&index));
    assert!(!analysis.scenarios[0].warnings.contains(&index));
}

#[test]
fn a_run_whose_every_scenario_reached_the_goal_says_so_and_one_without_a_goal_says_nothing() {
    let builder = || {
        RunBuilder::new("r1", 6)
            .scenario("narrow", &[], "plaintext", 4)
            .rates(&NARROW)
    };
    let reached = analyze_run(
        &builder().goal(0.05, None).build(),
        &AnalyzeOptions::default(),
    )
    .unwrap();
    assert_eq!(reached.warnings.len(), 1, "{:?}", reached.warnings);
    assert_eq!(reached.warnings[0].kind, WarningKind::WideCi);
    assert!(reached.warnings[0].message.contains("every scenario"));
    let plain = analyze_run(&builder().build(), &AnalyzeOptions::default()).unwrap();
    assert!(plain.warnings.is_empty(), "{:?}", plain.warnings);
}
