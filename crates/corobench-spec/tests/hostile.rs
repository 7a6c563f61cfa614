//! Specs written to break the resolver: numbers that overflow, sweeps that
//! repeat, requests that would break HTTP, serde's wording, plans too large
//! to hold. Each is refused at its place, in the project's words.

mod common;

use std::path::Path;
use std::time::Duration;

use common::catalog;
use corobench_spec::{Limits, Plan, SpecError, resolve, resolve_within};

const WORKLOAD: &str = "[[workloads]]\nname = \"p\"\npath = \"/plaintext\"\n";

fn resolve_text(text: &str) -> Result<Plan, SpecError> {
    resolve(text, Some(Path::new("suite.toml")), &catalog())
}

/// Every spec fails, with a message holding its expected fragment.
fn assert_refused(cases: &[(String, &str)]) {
    for (spec, expected) in cases {
        let error = resolve_text(spec).expect_err(spec).to_string();
        assert!(
            error.contains(expected),
            "spec:\n{spec}\nexpected {expected:?} in:\n{error}"
        );
    }
}

fn with_workload(head: &str) -> String {
    format!("{head}\n{WORKLOAD}")
}

#[test]
fn numbers_beyond_their_bounds_name_the_key_and_the_range() {
    let cases: Vec<(String, &str)> = [
        ("[run]\nduration = \"5124095576030431h\"", "suite.toml:2:12: `run.duration`: \"5124095576030431h\" is longer than a spec allows: use at most \"24h\""),
        ("[run]\nwarmup = \"18446744073709551615s\"", "`run.warmup`: \"18446744073709551615s\" is longer than a spec allows"),
        ("[run]\nwarmup = 18446744073709551615", "`run.warmup`: 18446744073709551615 is out of range: use 0 to 86400 seconds"),
        ("[run]\nidle = 1e400", "`run.idle`: 1e400 is out of range"),
        ("[run]\nidle = \"1e400\"", "`run.idle`: \"1e400\" is not a duration"),
        ("[run]\ntimeout = \"0s\"", "`run.timeout`: must be longer than 0"),
        ("[run]\ntrials = 10001", "`run.trials`: 10001 is out of range: use 1 to 10000"),
        ("[run]\ntrials = -1", "`run.trials`: -1 is out of range: use 1 to 10000"),
        ("[run]\ntrials = 6\nmax_trials = 5", "`run.max_trials`: 5 is out of range: use 6 to 10000"),
        ("[run]\ngenerator_threads = 2000", "`run.generator_threads`: 2000 is out of range: use 1 to 1024"),
        ("[run]\nseed = -5", "`run.seed`: -5 is out of range"),
        ("[schedule]\nconnections = 65536", "`schedule.connections`: 65536 is out of range: use 1 to 65535"),
        ("[schedule]\nconnections = 99999999999999999999999", "99999999999999999999999 is out of range"),
        ("[schedule]\nrates = 0", "`schedule.rates`: 0 is out of range: use 0.001 to 10000000 requests/s"),
        ("[schedule]\nrates = [1e30]", "`schedule.rates`: 1e30 is out of range"),
        ("[schedule]\nrates = [nan]", "`schedule.rates`: nan is out of range"),
        ("[schedule]\nrates = -inf", "`schedule.rates`: -inf is out of range"),
    ]
    .iter()
    .map(|(head, expected)| (with_workload(head), *expected))
    .collect();
    assert_refused(&cases);
}

#[test]
fn the_estimate_saturates_instead_of_overflowing() {
    let spec = with_workload(
        "[run]\ntrials = 10000\nduration = \"24h\"\nwarmup = \"24h\"\nidle = \"24h\"\n[schedule]\nconnections = [2, 3, 4, 5, 6, 7, 8, 9]",
    );
    let plan = resolve_text(&spec).unwrap();
    let day = Duration::from_secs(24 * 60 * 60);
    let estimate = plan.estimated_duration(Duration::ZERO);
    // Warm-up and window; the idle is patience, not counted.
    assert_eq!(estimate, day * 2 * 10_000 * 8 * 2);
    let mut huge = plan.clone();
    for scenario in &mut huge.scenarios {
        scenario.measurement.duration = Duration::MAX;
    }
    assert_eq!(huge.estimated_duration(Duration::MAX), Duration::MAX);
}

#[test]
fn a_sweep_that_repeats_a_value_is_refused_at_the_repeat() {
    let cases: Vec<(String, &str)> = [
        ("[schedule]\nconnections = [8, 8]", "suite.toml:2:19: `schedule.connections`: connections = [8, 8] repeats 8: each value is a scenario of its own; list it once"),
        ("[schedule]\nrates = [2.5, 2.50]", "`schedule.rates`: rates = [2.5, 2.50] repeats 2.5"),
        ("[parameters.go-ants]\npool_size = [16, 0x10]", "`parameters.go-ants.pool_size`: pool_size = [16, 0x10] repeats 16"),
        ("[parameters.go-ants]\npool_size = [16, \"+16\"]", "pool_size = [16, \"+16\"] repeats 16"),
        ("[parameters.go-ants]\nnonblocking = [true, \"true\"]", "repeats true"),
        ("targets = [\"go-ants\", \"go-ants\"]", "`targets`: targets = [\"go-ants\", \"go-ants\"] repeats go-ants"),
    ]
    .iter()
    .map(|(head, expected)| (with_workload(head), *expected))
    .collect();
    assert_refused(&cases);
    let own = "[[workloads]]\nname = \"p\"\npath = \"/p\"\nconnections = [4, 8, 4]\n";
    assert_refused(&[(
        own.to_string(),
        "suite.toml:4:22: `workloads[0].connections`: connections = [4, 8, 4] repeats 4",
    )]);
}

#[test]
fn requests_that_would_break_http_are_refused() {
    let with_headers = |headers: &str| format!("{WORKLOAD}headers = {headers}\n");
    let cases = vec![
        (
            with_headers("{ \"X Y\" = \"1\" }"),
            "suite.toml:4:13: `workloads[0].headers.X Y`: \"X Y\" is not a header name",
        ),
        (with_headers("{ \"X:\" = \"1\" }"), "is not a header name"),
        (
            with_headers("{ \"\" = \"1\" }"),
            "\"\" is not a header name",
        ),
        (
            with_headers("{ X = \"1\\r\\nEvil: yes\" }"),
            "`workloads[0].headers.X`: the value holds a line break",
        ),
        (
            with_headers("{ X = \"a\\u0000b\" }"),
            "the value holds a line break or another control character",
        ),
        (
            with_headers("{ Content-Length = \"5\" }"),
            "Content-Length is set by corobench from the body",
        ),
        (
            with_headers("{ transfer-encoding = \"chunked\" }"),
            "is set by corobench",
        ),
        (
            with_headers("{ X-A = \"1\", x-a = \"2\" }"),
            "given twice (header names ignore case)",
        ),
        (
            with_headers("{ X = 1 }"),
            "`workloads[0].headers.X`: expected text in quotes",
        ),
        (
            "[[workloads]]\nname = \"p\"\npath = \"/a b\"\n".to_string(),
            "`workloads[0].path`: must start with /",
        ),
        (
            "[[workloads]]\nname = \"p\"\npath = \"/\\u001b\"\n".to_string(),
            "visible ASCII",
        ),
        (
            "[[workloads]]\nname = \"p\"\npath = \"/é\"\n".to_string(),
            "percent-encode",
        ),
    ];
    assert_refused(&cases);
    let tab =
        format!("{WORKLOAD}headers = {{ X-Ok = \"a\\tb\", \"X!#$%&'*+-.^_`|~9\" = \"v\" }}\n");
    let headers = &resolve_text(&tab).unwrap().scenarios[0].workload.headers;
    assert_eq!(headers.len(), 2);
}

#[test]
fn target_selection_mistakes_are_refused() {
    let cases: Vec<(String, &str)> = [
        (
            "targets = []",
            "suite.toml:1:11: `targets`: an empty list selects no target",
        ),
        (
            "targets = [1]",
            "`targets`: expected text in quotes such as \"go-nethttp\", found the integer 1",
        ),
        (
            "targets = [\"go-nethttp\"]\n[parameters.go-ants]\npool_size = 8",
            "suite.toml:2:13: `parameters.go-ants`: \"go-ants\" is not among this spec's targets",
        ),
        (
            "[parameters.nope]\nx = 1",
            "`parameters.nope`: unknown target \"nope\"",
        ),
        (
            "[parameters.swoole-epoll]\nworkers = 0",
            "`parameters.swoole-epoll.workers`: \"0\" must be an integer in 1..=64",
        ),
    ]
    .iter()
    .map(|(head, expected)| (with_workload(head), *expected))
    .collect();
    assert_refused(&cases);
}

#[test]
fn parameters_of_a_target_skipped_here_stay_allowed() {
    for targets in ["[\"go-nethttp\", \"swoole-epoll\"]", "\"available\""] {
        let spec = with_workload(&format!(
            "targets = {targets}\n[parameters.swoole-epoll]\nworkers = [1, 2]"
        ));
        let plan = resolve_text(&spec).unwrap();
        assert_eq!(plan.skipped_targets[0].target, "swoole-epoll");
    }
}

#[test]
fn fractional_rates_are_accepted() {
    let plan = resolve_text(&with_workload(
        "[schedule]\nconnections = 4\nrates = [2.5, 1000]",
    ))
    .unwrap();
    let keys: Vec<String> = plan
        .scenarios
        .iter()
        .filter(|s| s.target == "go-nethttp")
        .map(|s| s.key.to_string())
        .collect();
    assert_eq!(
        keys,
        ["go-nethttp/p/rate=2.5/c=4", "go-nethttp/p/rate=1000/c=4"]
    );
}

#[test]
fn more_connections_than_the_process_can_open_are_refused() {
    let limits = Limits::from_proc(
        Some("Max open files            1024                 1064                 files\n"),
        None,
        None,
    );
    assert_eq!(limits.max_connections, 1000);
    let spec =
        |connections: u32| with_workload(&format!("[schedule]\nconnections = [10, {connections}]"));
    let resolve_here = |text: &str| resolve_within(text, None, &catalog(), &limits);
    assert!(resolve_here(&spec(1000)).is_ok());
    let error = resolve_here(&spec(1001)).unwrap_err().to_string();
    assert!(
        error.contains("<default suite>:2:20: `schedule.connections`: 1001 connections are more than this process can open (1000): this process may open 1064 files (the hard limit of `ulimit -n`)"),
        "{error}"
    );
}

#[test]
fn messages_use_the_projects_words_and_quote_little() {
    let specs = [
        "targets = 5",
        "targets = { a = 1 }",
        "[run]\ntrials = 1e300",
        "[run]\ntrials = \"6\"",
        "[run]\nduration = [1]",
        "[run]\nuntil_ci = true",
        "run = 5",
        "workloads = 5",
        "workloads = [1]",
        "[schedule]\nconnections = 1e300",
        "[schedule]\nrates = \"2000\"",
        "[parameters.go-ants]\npool_size = 1.0e300",
        "[[workloads]]\nname = 5\npath = \"/\"",
        "x = 1\nx = 2",
        "[run]\n[run]",
        "[[workloads]]\nname = \"p\"\npath = \"/\"\nmethod = 1979-05-27",
        &format!("name = \"{}\"", "x".repeat(100_000)),
        &format!("[run]\nbackend = \"{}\"", "\\u001b[2J".repeat(1000)),
    ];
    let serde_words = [
        "untagged",
        "expected i64",
        "invalid type",
        "did not match",
        "duplicate key",
    ];
    for spec in specs {
        let error = resolve_text(spec).expect_err(spec);
        let text = error.to_string();
        assert!(error.position.is_some(), "{text}");
        assert!(!serde_words.iter().any(|w| text.contains(w)), "{text}");
        assert!(
            text.len() < 400,
            "{} characters: {}",
            text.len(),
            &text[..400]
        );
        assert!(!text.contains('\u{1b}'), "{text:?}");
    }
    let twice = resolve_text("x = 1\nx = 2").unwrap_err().to_string();
    assert!(
        twice.contains("suite.toml:2:1: \"x\" is defined twice"),
        "{twice}"
    );
}

#[test]
fn a_plan_too_large_to_hold_is_refused_before_it_is_built() {
    let sweep = |n: u32| {
        (1..=n)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let combinations = with_workload(&format!(
        "[parameters.go-ants]\npool_size = [{}]\nqueue_length = [{}]",
        sweep(400),
        sweep(400)
    ));
    let error = resolve_text(&combinations).unwrap_err().to_string();
    assert!(error.contains("`parameters.go-ants.queue_length`: these sweeps give go-ants more than 100000 parameter combinations"), "{error}");
    let product = format!(
        "[schedule]\nconnections = [{}]\nrates = [{}]\n{WORKLOAD}",
        sweep(400),
        sweep(400)
    );
    let error = resolve_text(&product).unwrap_err().to_string();
    assert!(
        error.contains(
            "suite.toml:5:8: `workloads[0]`: the spec expands into more than 100000 scenarios"
        ),
        "{error}"
    );
    let body = "x".repeat(1 << 20);
    let copies = format!(
        "targets = [\"go-nethttp\"]\n[[workloads]]\nname = \"big\"\npath = \"/upload\"\nmethod = \"POST\"\nbody = \"{body}\"\nconnections = [{}]\n",
        sweep(1100)
    );
    let error = resolve_text(&copies).unwrap_err().to_string();
    assert!(
        error.contains("`workloads[0]`: the plan would hold more than 1024 MiB of requests"),
        "{error}"
    );
    let too_long = format!("{WORKLOAD}body = \"{body}x\"\n");
    let error = resolve_text(&too_long).unwrap_err().to_string();
    assert!(
        error.contains("`workloads[0].body`: the body is longer than 1024 KiB"),
        "{error}"
    );
}

#[test]
fn run_profile_is_off_by_default_and_takes_a_boolean_only() {
    let plan = |head: &str| resolve_text(&with_workload(head));
    assert!(!plan("").unwrap().profile);
    let profiled = plan("[run]\nprofile = true").unwrap();
    assert!(profiled.profile);
    // One more trial per scenario: 6 trials of 1 + 5 s each become 7.
    let trial = Duration::from_secs(1 + 5);
    let scenarios = u32::try_from(profiled.scenarios.len()).unwrap();
    let estimate = |plan: &Plan| plan.estimated_duration(Duration::ZERO);
    assert_eq!(estimate(&profiled), trial * 7 * scenarios);
    assert_eq!(estimate(&plan("").unwrap()), trial * 6 * scenarios);
    assert!(!plan("[run]\nprofile = false").unwrap().profile);
    assert_refused(&[(with_workload("[run]\nprofile = \"yes\""), "`run.profile`")]);
}

#[test]
fn idle_connections_sweep_scenarios_of_their_own_without_a_schedule() {
    let spec =
        |extra: &str| format!("[[workloads]]\nname = \"idle\"\npath = \"/plaintext\"\n{extra}");
    let plan = resolve_text(&spec("idle_connections = [1000, 5000]")).unwrap();
    let idle: Vec<(bool, u32)> = plan
        .scenarios
        .iter()
        .map(|s| (s.workload.idle, s.schedule.connections))
        .collect();
    assert_eq!(idle[..2], [(true, 1000), (true, 5000)]);
    // An idle trial takes its settle time, not the warm-up and window.
    let trials = plan.trials.min * u32::try_from(plan.scenarios.len()).unwrap();
    assert_eq!(
        plan.estimated_duration(Duration::ZERO),
        corobench_spec::IDLE_TRIAL_ESTIMATE * trials
    );
    assert!(
        !resolve_text(&with_workload("")).unwrap().scenarios[0]
            .workload
            .idle
    );
    assert_refused(&[
        (
            spec("idle_connections = 100\nconnections = 4"),
            "an idle workload (idle_connections) sends no load, so it takes no connections",
        ),
        (
            spec("idle_connections = [100, 100]"),
            "idle_connections = [100, 100] repeats 100",
        ),
        (
            spec("idle_connections = 0"),
            "`workloads[0].idle_connections`: 0 is out of range",
        ),
    ]);
}
