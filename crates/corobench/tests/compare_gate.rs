//! `corobench compare --fail-on` as a CI job runs it, on the stored fixture
//! runs: the exit status, the verdict on stderr, the JUnit and GitHub
//! formats, and the syntax errors that must exit 2.

mod lab;

use std::process::Output;

use lab::{Fixture, stderr, stdout, usage_error};

const RULES: &str = "rps:-5%,p99:+10%";

/// `corobench compare A B --fail-on RULES` with `more` flags.
fn gate(fixture: &Fixture, runs: [&str; 2], rules: &str, more: &[&str]) -> Output {
    let mut args = vec!["compare", runs[0], runs[1], "--fail-on", rules];
    args.extend_from_slice(more);
    fixture.corobench(&args)
}

#[test]
fn an_unchanged_rerun_passes_the_gate() {
    let fixture = Fixture::new();
    let output = fixture.corobench(&[
        "compare",
        &fixture.run_a,
        &fixture.run_a,
        "--fail-on",
        RULES,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        "gate passed: 40 metrics of 20 scenarios within thresholds\n"
    );
    assert!(stdout(&output).starts_with("corobench compare"));
}

/// The fixture's runs differ by more than 5 % in places, but too noisily
/// for five and six trials to show it: the gate does not fail on noise.
#[test]
fn noisy_differences_beyond_the_thresholds_pass() {
    let fixture = Fixture::new();
    let output = gate(
        &fixture,
        [&fixture.run_a, &fixture.run_b],
        "rps:-1%,p99:+1%",
        &["--format", "junit"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let xml = stdout(&output);
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 32, "{xml}");
    assert!(xml.contains(r#"<testcase classname="node-http/io-5ms/c=8" name="rps:-1%"/>"#));
    assert!(!xml.contains("<failure"));
}

#[test]
fn github_annotations_end_with_the_verdict() {
    let fixture = Fixture::new();
    let output = gate(
        &fixture,
        [&fixture.run_a, &fixture.run_b],
        RULES,
        &["-f", "github"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "::notice title=corobench gate::gate passed: 32 metrics of 16 scenarios within \
         thresholds\n"
    );
}

#[test]
fn bad_rules_exit_2_with_the_column_and_an_example() {
    let fixture = Fixture::new();
    let output = gate(
        &fixture,
        [&fixture.run_a, &fixture.run_b],
        "rps:-5%,p99:10%",
        &[],
    );
    let message = usage_error(&output);
    assert!(
        message.contains("at column 13: expected + or -"),
        "{message}"
    );
    assert!(
        message.contains("example: --fail-on \"rps:-5%,p99:+10%\""),
        "{message}"
    );
}

/// Issue "wrong successes", item 2: a rule that matches no metric used to
/// print `gate passed: 0 metrics of 20 scenarios` and exit 0.
#[test]
fn a_rule_that_matches_no_metric_exits_2_naming_it() {
    let fixture = Fixture::new();
    let output = gate(
        &fixture,
        [&fixture.run_a, &fixture.run_b],
        "rps:-5%,program:nosuch:+5%",
        &[],
    );
    let message = usage_error(&output);
    assert!(
        message.contains("`program:nosuch:+5%` matches no metric of the 16 scenarios"),
        "{message}"
    );
    assert!(message.contains("they have: rps,"), "{message}");
    assert!(!message.contains("gate passed"), "{message}");
}

#[test]
fn gate_formats_need_rules() {
    let fixture = Fixture::new();
    let output = fixture.corobench(&["compare", &fixture.run_a, &fixture.run_b, "-f", "junit"]);
    let message = usage_error(&output);
    assert!(message.contains("add --fail-on"), "{message}");
}

/// Stores a copy of `run` under `id` whose every trial served 20% fewer
/// requests a second at 1.5 times the latency: a build that got slower.
fn store_slowed_copy(fixture: &Fixture, run: &str, id: &str) {
    let mut store = corobench_store::Store::open_existing(&fixture.db).unwrap();
    let stored = store.load_run(run).unwrap();
    let mut record = stored.run.clone();
    record.id = id.to_owned();
    record.started_at_unix_ms += 1;
    store
        .create_run(&record, stored.trials_per_scenario, &stored.scenarios)
        .unwrap();
    for mut trial in stored.trials {
        if let Some(load) = trial.load.as_mut() {
            load.requests_per_s *= 0.8;
            let mut slower = corobench_model::LatencyHistogram::new();
            for value in load.latency.histogram.inner().iter_recorded() {
                for _ in 0..value.count_at_value() {
                    slower.record_us(value.value_iterated_to() * 3 / 2);
                }
            }
            load.latency = slower.report();
        }
        store.record_trial(id, &trial).unwrap();
    }
}

#[test]
fn a_slowed_rerun_fails_the_gate_and_names_the_offenders() {
    let fixture = Fixture::new();
    store_slowed_copy(&fixture, &fixture.run_a, "slowed");
    let output = gate(&fixture, [&fixture.run_a, "slowed"], RULES, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let verdict = stderr(&output);
    assert!(
        verdict
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("gate failed: 14 of 40 metrics")),
        "{verdict}"
    );
    // Each offender on a line of its own, with the change and its interval.
    assert!(
        verdict.contains("FAIL node-http/io-5ms/c=8 req/s (rps:-5%)"),
        "{verdict}"
    );
    assert!(verdict.contains("(p99:+10%)"), "{verdict}");
    let junit = gate(
        &fixture,
        [&fixture.run_a, "slowed"],
        RULES,
        &["-f", "junit"],
    );
    assert_eq!(junit.status.code(), Some(1));
    assert!(stdout(&junit).contains("<failure"), "{}", stdout(&junit));
}

#[test]
fn a_stored_run_slowed_by_a_fifth_fails_where_its_trials_are_steady() {
    let base = Fixture::new().stored_run_a();
    let mut slowed = base.clone();
    slowed.run.id = "slowed".to_owned();
    for load in slowed.trials.iter_mut().filter_map(|t| t.load.as_mut()) {
        load.requests_per_s *= 0.8;
    }
    let rules = corobench_analyze::gate::parse_rules("rps:-5%").unwrap();
    let options = corobench_analyze::AnalyzeOptions::default();
    let gate = corobench_analyze::compare_runs_gated(&base, &slowed, &options, Some(&rules))
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
    let rerun = corobench_analyze::compare_runs_gated(&base, &base, &options, Some(&rules))
        .gate
        .unwrap();
    assert!(rerun.passed());
    assert_eq!(rerun.scenarios, 20);
}

#[test]
fn a_rule_may_name_req_s_as_the_table_prints_it() {
    let fixture = Fixture::new();
    let output = gate(&fixture, [&fixture.run_a, &fixture.run_a], "req/s:-5%", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).starts_with("gate passed: 20 metrics"));
}

#[test]
fn metrics_keeps_only_the_tables_named() {
    let fixture = Fixture::new();
    let args = [
        "compare",
        &fixture.run_a,
        &fixture.run_b,
        "--metrics",
        "rps,p99",
    ];
    let output = fixture.corobench(&args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let headings: Vec<&str> = text
        .lines()
        .filter(|line| line.ends_with("is better)"))
        .collect();
    assert_eq!(
        headings,
        ["req/s (higher is better)", "p99 (lower is better)"],
        "{text}"
    );
    assert!(!text.contains("intervals of p99.9"), "{text}");
    let message = usage_error(&fixture.corobench(&[
        "compare",
        &fixture.run_a,
        &fixture.run_b,
        "--metrics",
        "rps,speed",
    ]));
    assert!(
        message.contains("--metrics: unknown metric `speed`"),
        "{message}"
    );
}
