//! The regression gate's verdicts as JUnit XML, GitHub annotations and the
//! stderr summary, on the fixture comparison with a gate attached.

use corobench_model::{Gate, GateCheck, GateOutcome, GateRule, Metric, RunComparison};
use corobench_report::{GateFormat, gate_summary, render_gate};

const COMPARISON: &str = include_str!("fixtures/run-comparison.json");

fn check(scenario: &str, outcome: GateOutcome, reason: &str) -> GateCheck {
    GateCheck {
        scenario: scenario.to_owned(),
        metric: Metric::RequestsPerS,
        rule: "rps:-5%".to_owned(),
        a_median: 1410.0,
        b_median: 1128.0,
        ratio: Some(0.8),
        ratio_lo: Some(0.78),
        ratio_hi: Some(0.82),
        change_text: "-20.00% [-22.00%, -18.00%]".to_owned(),
        p_value: Some(0.002),
        outcome,
        reason: reason.to_owned(),
    }
}

fn gated(checks: Vec<GateCheck>) -> RunComparison {
    let mut comparison: RunComparison = serde_json::from_str(COMPARISON).unwrap();
    comparison.gate = Some(Gate {
        rules: vec![GateRule {
            metric: Metric::RequestsPerS,
            threshold: -0.05,
            text: "rps:-5%".to_owned(),
        }],
        checks,
        scenarios: 2,
        alpha: 0.05,
        confidence: 0.95,
    });
    comparison
}

fn failing() -> RunComparison {
    gated(vec![
        check(
            "go-nethttp/io-5ms/c=8",
            GateOutcome::Failed,
            "the interval lies wholly below rps:-5% and p ≤ 0.05",
        ),
        check(
            "node-http/io-5ms/c=8",
            GateOutcome::Passed,
            "within rps:-5%",
        ),
    ])
}

fn rendered(format: GateFormat, comparison: &RunComparison) -> String {
    let mut out = Vec::new();
    render_gate(format, comparison, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn junit_has_a_testcase_per_scenario_and_metric() {
    insta::assert_snapshot!("gate.junit", rendered(GateFormat::Junit, &failing()));
}

#[test]
fn github_annotates_each_offender() {
    insta::assert_snapshot!("gate.github", rendered(GateFormat::Github, &failing()));
}

#[test]
fn the_summary_lists_offenders_then_the_verdict() {
    let comparison = failing();
    let summary = gate_summary(comparison.gate.as_ref().unwrap());
    insta::assert_snapshot!("gate.summary", summary);
}

#[test]
fn a_passing_gate_says_how_much_it_checked() {
    let comparison = gated(vec![check(
        "go-nethttp/io-5ms/c=8",
        GateOutcome::Passed,
        "within rps:-5%",
    )]);
    let summary = gate_summary(comparison.gate.as_ref().unwrap());
    assert_eq!(
        summary,
        "gate passed: 1 metrics of 2 scenarios within thresholds\n"
    );
    let github = rendered(GateFormat::Github, &comparison);
    assert!(!github.contains("::error"));
}

/// The gate is part of the JSON document and reads back unchanged.
#[test]
fn the_gate_round_trips_through_json() {
    let comparison = failing();
    let json = serde_json::to_string(&comparison).unwrap();
    let back: RunComparison = serde_json::from_str(&json).unwrap();
    assert_eq!(back, comparison);
}

/// Issue "wrong successes", item 2: a gate whose every check could not be
/// judged, or that had no scenario to judge, fails and says why.
#[test]
fn a_gate_that_judged_nothing_fails_and_says_why() {
    let comparison = gated(vec![check(
        "go-nethttp/io-5ms/c=8",
        GateOutcome::Undecided,
        "no ratio interval for B/A: too few trials",
    )]);
    let gate = comparison.gate.as_ref().unwrap();
    assert!(!gate.passed());
    let summary = gate_summary(gate);
    assert!(
        summary.ends_with(
            "gate failed: none of the 1 checks on 2 scenarios could be judged \
             (see NOT JUDGED above): rerun with more trials\n"
        ),
        "{summary}"
    );
    let github = rendered(GateFormat::Github, &comparison);
    assert!(
        github.contains("::error title=corobench gate::gate failed"),
        "{github}"
    );
    let mut nothing = gated(Vec::new());
    nothing.gate.as_mut().unwrap().scenarios = 0;
    let summary = gate_summary(nothing.gate.as_ref().unwrap());
    assert!(
        summary.contains("no scenario was measured by both runs"),
        "{summary}"
    );
}
