//! The regression gate: rules parsed from `--fail-on`, and verdicts on runs
//! whose trials make the U test and the ratio interval known.

use corobench_model::{GateOutcome, Metric, ProgramUnit};

use super::builder::RunBuilder;
use crate::analyze::gate::parse_rules;
use crate::analyze::{AnalyzeOptions, compare_runs, compare_runs_gated};

const BASE: [f64; 6] = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0];
/// 10 % slower than BASE in every trial: p = 0.002, B/A wholly below 0.95.
const SLOWED: [f64; 6] = [90.0, 90.9, 91.8, 92.7, 93.6, 94.5];
/// A median 10 % below BASE's, but spread so widely the U test cannot
/// tell them apart.
const NOISY_DROP: [f64; 6] = [60.0, 75.0, 92.0, 93.0, 130.0, 140.0];

fn run(id: &str, rates: &[f64]) -> corobench_store::StoredRun {
    RunBuilder::new(id, 6)
        .scenario("go-nethttp", &[], "plaintext", 4)
        .rates(rates)
        .scenario("go-ants", &["pool_size=8"], "plaintext", 4)
        .rates(&BASE)
        .build()
}

fn gated(a_rates: &[f64], b_rates: &[f64], rules: &str) -> corobench_model::Gate {
    let rules = parse_rules(rules).unwrap();
    let (a, b) = (run("a", a_rates), run("b", b_rates));
    compare_runs_gated(&a, &b, &AnalyzeOptions::default(), Some(&rules))
        .gate
        .unwrap()
}

#[test]
fn a_slowed_run_fails_and_names_the_offender() {
    let gate = gated(&BASE, &SLOWED, "rps:-5%,p99:+10%");
    assert!(!gate.passed());
    let failures: Vec<_> = gate.failures().collect();
    assert_eq!(failures.len(), 1, "{failures:#?}");
    let offender = failures[0];
    assert_eq!(offender.scenario, "go-nethttp/plaintext/c=4");
    assert_eq!(offender.metric, Metric::RequestsPerS);
    assert_eq!(offender.rule, "rps:-5%");
    assert!((offender.ratio.unwrap() - 0.9).abs() < 0.01);
    assert!(offender.ratio_hi.unwrap() < 0.95);
    assert!(offender.p_value.unwrap() <= 0.05);
    assert!(
        offender.change_text.starts_with("-10."),
        "{}",
        offender.change_text
    );
    assert!(
        offender.reason.contains("wholly below"),
        "{}",
        offender.reason
    );
    // p99 rose about 11 %, but not wholly beyond 10 %: within the gate.
    assert_eq!(gate.checks.len(), 4);
    assert_eq!(gate.scenarios, 2);
}

#[test]
fn an_unchanged_rerun_passes() {
    let gate = gated(&BASE, &BASE, "rps:-5%,p99:+10%,mean:+1%");
    assert!(gate.passed());
    assert!(gate.checks.iter().all(|c| c.outcome == GateOutcome::Passed));
    assert!(gate.checks.iter().all(|c| c.reason.starts_with("within")));
}

#[test]
fn a_drop_beyond_the_threshold_that_is_not_significant_passes() {
    let gate = gated(&BASE, &NOISY_DROP, "rps:-5%");
    let check = &gate.checks[0];
    assert!(check.ratio.unwrap() < 0.95, "{check:#?}");
    assert!(check.p_value.unwrap() > 0.05);
    assert_eq!(check.outcome, GateOutcome::Passed);
    assert!(check.reason.contains("not significant"), "{}", check.reason);
    assert!(gate.passed());
}

#[test]
fn a_significant_change_whose_interval_reaches_the_threshold_passes() {
    // Significant at 10 %, but the interval of B/A reaches above 0.91.
    let gate = gated(&BASE, &SLOWED, "rps:-9%");
    let check = &gate.checks[0];
    assert!(check.p_value.unwrap() <= 0.05);
    assert_eq!(check.outcome, GateOutcome::Passed, "{check:#?}");
    assert!(check.reason.contains("reaches back"), "{}", check.reason);
}

/// Issue "wrong successes", item 2: a gate whose every check is NOT
/// JUDGED has passed nothing, so it fails.
#[test]
fn too_few_trials_for_an_interval_are_not_judged_and_the_gate_fails() {
    let a = RunBuilder::new("a", 2)
        .scenario("t", &[], "plaintext", 4)
        .rates(&[100.0, 101.0])
        .build();
    let b = RunBuilder::new("b", 2)
        .scenario("t", &[], "plaintext", 4)
        .rates(&[50.0, 51.0])
        .build();
    let rules = parse_rules("rps:-5%").unwrap();
    let gate = compare_runs_gated(&a, &b, &AnalyzeOptions::default(), Some(&rules))
        .gate
        .unwrap();
    assert_eq!(gate.checks[0].outcome, GateOutcome::Undecided);
    assert_eq!(gate.judged(), 0);
    assert!(!gate.passed());
}

#[test]
fn a_comparison_without_rules_has_no_gate() {
    let a = run("a", &BASE);
    assert!(
        compare_runs(&a, &a, &AnalyzeOptions::default())
            .gate
            .is_none()
    );
}

#[test]
fn rules_name_a_metric_and_the_worse_direction() {
    let rules = parse_rules("rps:-5%, p99.9:+2.5%,program:B/op:+1%,error_rate:+0%").unwrap();
    let read: Vec<(Metric, f64)> = rules.iter().map(|r| (r.metric, r.threshold)).collect();
    assert_eq!(
        read,
        [
            (Metric::RequestsPerS, -0.05),
            (Metric::LatencyP999Us, 0.025),
            (Metric::Program(ProgramUnit::new("B/op")), 0.01),
            (Metric::ErrorRate, 0.0),
        ]
    );
    assert_eq!(rules[1].text, "p99.9:+2.5%");
}

/// Issue "wrong successes", item 13: spaces around a rule's colon made
/// `rps : -5%` an unknown metric `rps ` and `p99: +10%` a missing sign.
#[test]
fn spaces_around_the_colon_are_trimmed() {
    let rules = parse_rules("rps : -5%, p99: +10% ").unwrap();
    let read: Vec<(Metric, f64)> = rules.iter().map(|r| (r.metric, r.threshold)).collect();
    assert_eq!(
        read,
        [(Metric::RequestsPerS, -0.05), (Metric::LatencyP99Us, 0.1)]
    );
    assert_eq!(rules[0].text, "rps:-5%");
    let error = parse_rules("rps:  5%").unwrap_err();
    assert_eq!(error.column, 7, "{error}");
}

#[test]
fn bad_rules_say_where_and_show_an_example() {
    let cases = [
        ("rps:-5", 7, "expected `%`"),
        ("rps:5%", 5, "expected + or -"),
        ("rps:-5%,latency:+1%", 9, "unknown metric `latency`"),
        ("rps:-5%,,p99:+1%", 9, "empty rule"),
        ("p99", 4, "expected `:`"),
        ("rps:-x%", 6, "`x` is not a percentage"),
        ("rps:-100%", 6, "a drop of 100%"),
    ];
    for (text, column, message) in cases {
        let error = parse_rules(text).unwrap_err();
        assert_eq!(error.column, column, "{text}: {error}");
        let shown = error.to_string();
        assert!(shown.contains(message), "{text}: {shown}");
        assert!(shown.contains("example: --fail-on \"rps:-5%,p99:+10%\""));
    }
}

/// The older run of the report fixture (crates/corobench/tests/fixtures/report),
/// read from a scratch copy so the committed database is never opened.
fn fixture_run() -> corobench_store::StoredRun {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/report/runs.db");
    std::fs::copy(fixture, &db).unwrap();
    let store = corobench_store::Store::open_existing(&db).unwrap();
    let mut runs = store.runs().unwrap();
    runs.sort_by_key(|r| r.started_at_unix_ms);
    store.load_run(&runs[0].id).unwrap()
}

#[test]
fn a_stored_run_slowed_by_a_fifth_fails_where_its_trials_are_steady() {
    let base = fixture_run();
    let mut slowed = base.clone();
    slowed.run.id = "slowed".to_owned();
    for load in slowed.trials.iter_mut().filter_map(|t| t.load.as_mut()) {
        load.requests_per_s *= 0.8;
    }
    let rules = parse_rules("rps:-5%").unwrap();
    let options = AnalyzeOptions::default();
    let gate = compare_runs_gated(&base, &slowed, &options, Some(&rules))
        .gate
        .unwrap();
    let offenders: Vec<&str> = gate.failures().map(|c| c.scenario.as_str()).collect();
    // The io-5ms scenarios vary by a few percent: a fifth less is clear.
    // The plaintext ones vary by more than half: it is not.
    assert!(
        offenders.contains(&"go-nethttp/io-5ms/c=8"),
        "{offenders:?}"
    );
    assert!(offenders.iter().all(|key| !key.contains("plaintext")));
    for check in gate.failures() {
        assert!((check.ratio.unwrap() - 0.8).abs() < 1e-9, "{check:#?}");
        assert!(check.ratio_hi.unwrap() < 0.95);
    }
    let rerun = compare_runs_gated(&base, &base, &options, Some(&rules))
        .gate
        .unwrap();
    assert!(rerun.passed());
    assert_eq!(rerun.scenarios, 20);
}
