//! The regression gate: rules parsed from `--fail-on`, and verdicts on runs
//! whose trials make the U test and the ratio interval known.

use corobench_model::{GateOutcome, Metric, ProgramUnit};

use crate::fixtures::RunBuilder;
use crate::gate::parse_rules;
use crate::{AnalyzeOptions, compare_runs, compare_runs_gated};

const BASE: [f64; 6] = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0];
/// 10 % slower than BASE in every trial: p = 0.002, B/A wholly below 0.95.
const SLOWED: [f64; 6] = [90.0, 90.9, 91.8, 92.7, 93.6, 94.5];
/// A median 10 % below BASE's, but spread so widely the U test cannot
/// tell them apart.
const NOISY_DROP: [f64; 6] = [60.0, 75.0, 92.0, 93.0, 130.0, 140.0];

fn run(id: &str, rates: &[f64]) -> corobench_model::StoredRun {
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

#[test]
fn rules_name_the_costs_per_request() {
    use corobench_model::{Cost, PerRequest};
    let rules = parse_rules("syscalls:+10%,gen_sys_us:+5%").unwrap();
    let read: Vec<Metric> = rules.iter().map(|r| r.metric).collect();
    assert_eq!(
        read,
        [
            Metric::PerRequest(PerRequest::server(Cost::Syscalls)),
            Metric::PerRequest(PerRequest::generator(Cost::SystemCpu)),
        ]
    );
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
fn bad_rules_say_where_under_a_caret() {
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
        assert!(
            shown.starts_with(&format!("\"{text}\": at column {column}")),
            "{shown}"
        );
    }
}

/// Spread so that the ratio of the medians (86.5 / 102.5) and the
/// Hodges–Lehmann ratio of the trials differ.
const SKEWED_DROP: [f64; 6] = [80.0, 85.0, 86.0, 87.0, 93.0, 94.0];

#[test]
fn the_gate_and_the_table_show_one_change_for_one_comparison() {
    let rules = parse_rules("rps:-5%").unwrap();
    let (a, b) = (run("a", &BASE), run("b", &SKEWED_DROP));
    let comparison = compare_runs_gated(&a, &b, &AnalyzeOptions::default(), Some(&rules));
    let gate = comparison.gate.as_ref().unwrap();
    let check = &gate.checks[0];
    let row = comparison.tables[0]
        .rows
        .iter()
        .find(|r| r.key == check.scenario)
        .unwrap();
    let compared = row.comparison.as_ref().unwrap();
    assert_eq!(compared.delta_text, check.change_text);
    assert_eq!(compared.change_text, check.change_text);
    assert_eq!(compared.ratio, check.ratio);
    assert_eq!(
        (compared.ratio_lo, compared.ratio_hi),
        (check.ratio_lo, check.ratio_hi)
    );
    assert_eq!(compared.p_value, check.p_value.unwrap());
    let medians = 86.5 / 102.5 - 1.0;
    assert!(
        !compared
            .delta_text
            .starts_with(&corobench_stats::format_signed_pct(medians)),
        "the change is not the ratio of the medians: {}",
        compared.delta_text
    );
}

#[test]
fn a_rule_may_name_a_metric_by_the_label_the_table_prints() {
    let rules = parse_rules("req/s:-5%,CPU:+10%").unwrap();
    assert_eq!(rules[0].metric, Metric::RequestsPerS);
    assert_eq!(rules[1].metric, Metric::ServerCpuPct);
    assert_eq!(rules[0].text, "req/s:-5%");
}
