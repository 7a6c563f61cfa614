//! Spec resolution: shipped suites, sweeps, and every kind of bad input.

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use common::catalog;
use common::shipped::with_programs;
use corobench_spec::{Catalog, CatalogTarget, DEFAULT_SUITE, Plan, resolve};

/// A compact, stable rendering of a plan for snapshots.
fn render(plan: &Plan) -> String {
    let mut out = format!(
        "name: {}\ntrials: {:?}\nseed: {}\nserver_cpus: {:?}\ngenerator_cpus: {:?}\nskipped: {:?}\n",
        plan.name,
        plan.trials,
        plan.seed,
        plan.server_cpus,
        plan.generator_cpus,
        plan.skipped_targets
            .iter()
            .map(|s| (&s.target, &s.reason))
            .collect::<Vec<_>>()
    );
    for s in &plan.scenarios {
        let m = &s.measurement;
        let _ = writeln!(
            out,
            "{:>3} {} [{} {}, {:?}+{:?} warm-up, {} thread(s), {}{}]",
            s.index,
            s.key,
            s.workload.method,
            s.workload.path,
            m.duration,
            m.warmup,
            m.generator_threads,
            m.backend,
            if s.needs_database { ", database" } else { "" }
        );
    }
    out
}

fn resolve_text(text: &str) -> Result<Plan, String> {
    resolve(text, Some(Path::new("suite.toml")), &catalog()).map_err(|e| e.to_string())
}

#[test]
fn default_suite_resolves() {
    let plan = resolve(DEFAULT_SUITE, None, &catalog()).unwrap();
    insta::assert_snapshot!(render(&plan));
}

#[test]
fn shipped_suites_resolve() {
    let suites = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites");
    for entry in std::fs::read_dir(suites).unwrap() {
        let path = entry.unwrap().path();
        // A suite's helper files live in a folder beside it.
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let catalog = with_servers(with_programs(catalog()), &text);
        let plan = resolve(&text, Some(&path), &catalog);
        assert!(plan.is_ok(), "{}: {}", path.display(), plan.unwrap_err());
    }
}

/// The catalog with the servers a suite defines itself (`[servers.NAME]`,
/// which corobench adds as targets before resolving it).
fn with_servers(mut catalog: Catalog, spec: &str) -> Catalog {
    let document: toml::Table = spec.parse().unwrap();
    let servers = document.get("servers").and_then(toml::Value::as_table);
    for name in servers.into_iter().flat_map(toml::Table::keys) {
        catalog.targets.push(CatalogTarget {
            name: name.clone(),
            available: Ok(()),
            parameters: Vec::new().into_iter().collect(),
            min_warmup: std::time::Duration::ZERO,
            program: None,
            unserved: std::collections::BTreeMap::new(),
        });
    }
    catalog
}

#[test]
fn the_database_pool_suite_sweeps_the_pool_over_select1_with_a_database() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/database-pool.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let plan = resolve(&text, Some(&path), &with_programs(catalog())).unwrap();
    let keys: Vec<&str> = plan.scenarios.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "go-nethttp/db_pool=10/select1/c=250",
            "go-nethttp/db_pool=50/select1/c=250",
            "go-nethttp/db_pool=100/select1/c=250",
            "node-http/db_pool=10/select1/c=250",
            "node-http/db_pool=50/select1/c=250",
            "node-http/db_pool=100/select1/c=250",
        ]
    );
    assert!(plan.scenarios.iter().all(|s| s.needs_database));
    assert_eq!(plan.claims.len(), 8);
}

#[test]
fn the_machine_probe_is_on_unless_the_spec_turns_it_off() {
    let on = resolve_text(&format!("[run]\ntrials = 1\n{WORKLOAD}")).unwrap();
    assert!(on.machine_probe);
    let off = resolve_text(&format!("[run]\nmachine_probe = false\n{WORKLOAD}")).unwrap();
    assert!(!off.machine_probe);
}

#[test]
fn parameter_sweep_is_a_product() {
    let spec = r#"
        targets = ["go-nethttp", "go-ants", "swoole-epoll"]
        [parameters.go-ants]
        pool_size = [50, 100]
        queue_length = [1000, 2000, 4000]
        [run]
        duration = "5s"
        [schedule]
        connections = [64, 256]
        [[workloads]]
        name = "io"
        path = "/io?ms=10"
        [[workloads]]
        name = "db"
        path = "/db"
        connections = 32
    "#;
    let plan = resolve_text(spec).unwrap();
    insta::assert_snapshot!(render(&plan));
}

#[test]
fn open_loop_rates_times_connections() {
    let spec = r#"
        targets = ["go-nethttp"]
        [schedule]
        connections = 100
        rates = [1000, 2000]
        [[workloads]]
        name = "json"
        path = "/json"
    "#;
    let keys: Vec<String> = resolve_text(spec)
        .unwrap()
        .scenarios
        .into_iter()
        .map(|s| s.key.to_string())
        .collect();
    assert_eq!(
        keys,
        [
            "go-nethttp/json/rate=1000/c=100",
            "go-nethttp/json/rate=2000/c=100"
        ]
    );
}

#[test]
fn keepalive_and_pipeline_join_the_schedule_key() {
    let spec = r#"
        targets = ["go-nethttp"]
        [schedule]
        connections = 100
        [[workloads]]
        name = "short"
        path = "/plaintext"
        connections = 1000
        keepalive = false
        [[workloads]]
        name = "pipelined"
        path = "/plaintext"
        pipeline = 16
        [[workloads]]
        name = "plain"
        path = "/plaintext"
        keepalive = true
        pipeline = 1
    "#;
    let plan = resolve_text(spec).unwrap();
    let keys: Vec<String> = plan.scenarios.iter().map(|s| s.key.to_string()).collect();
    assert_eq!(
        keys,
        [
            "go-nethttp/short/c=1000/no-keepalive",
            "go-nethttp/pipelined/c=100/pipeline=16",
            "go-nethttp/plain/c=100"
        ]
    );
    assert!(!plan.scenarios[0].schedule.keepalive);
    assert_eq!(plan.scenarios[1].schedule.pipeline, 16);
    let workload = "[[workloads]]\nname = \"p\"\npath = \"/plaintext\"\n";
    for (extra, expected) in [
        (
            "pipeline = 0\n",
            "`workloads[0].pipeline`: 0 is out of range: use 1 to 1024",
        ),
        ("pipeline = 2000\n", "2000 is out of range: use 1 to 1024"),
        (
            "pipeline = 4\nkeepalive = false\n",
            "pipelining needs kept-alive connections",
        ),
        (
            "pipeline = 4\nrates = [100]\n",
            "pipelining is for closed loops",
        ),
        ("keepalive = \"no\"\n", "true or false, without quotes"),
    ] {
        let error = resolve_text(&format!("{workload}{extra}")).expect_err(extra);
        assert!(error.contains(expected), "{extra}: {error}");
    }
}

/// Each bad spec fails with a message naming the place and the fix.
fn assert_refused(cases: &[(String, &str)]) {
    for (spec, expected) in cases {
        let error = resolve_text(spec).expect_err(spec);
        assert!(
            error.contains(expected),
            "{spec:?}\n  gives: {error}\n  wants: {expected}"
        );
    }
}

const WORKLOAD: &str = "[[workloads]]\nname = \"p\"\npath = \"/plaintext\"\n";

#[test]
fn bad_targets_and_parameters_name_file_line_and_key() {
    let workload = WORKLOAD;
    let cases: Vec<(String, &str)> = vec![
        (
            format!("trails = 3\n{workload}"),
            "suite.toml:1:1: `trails`: unknown key; the top level takes: name,",
        ),
        (
            format!("targets = [\"go-nethtp\"]\n{workload}"),
            "suite.toml:1:12: `targets`: unknown target \"go-nethtp\"; known targets: go-ants, go-nethttp, swoole-epoll",
        ),
        (
            format!("[parameters.go-ants]\npool = 5\n{workload}"),
            "suite.toml:2:1: `parameters.go-ants.pool`: go-ants has no parameter \"pool\"; it has: nonblocking, pool_size, queue_length",
        ),
        (
            format!("[parameters.go-ants]\npool_size = [0]\n{workload}"),
            "`parameters.go-ants.pool_size`: \"0\" must be an integer in 1..=100000",
        ),
        (
            format!("[parameters.go-ants]\nnonblocking = \"maybe\"\n{workload}"),
            "must be one of false, true",
        ),
    ];
    assert_refused(&cases);
}

#[test]
fn bad_settings_and_workloads_name_file_line_and_key() {
    let workload = WORKLOAD;
    let cases: Vec<(String, &str)> = vec![
        (
            format!("[run]\ntrials = 0\n{workload}"),
            "suite.toml:2:10: `run.trials`: 0 is out of range: use 1 to 10000",
        ),
        (
            format!("[run]\nduration = \"ten\"\n{workload}"),
            "`run.duration`: \"ten\" is not a duration",
        ),
        (
            format!("[run]\ngenerator_cpus = \"7\"\n{workload}"),
            "`run.generator_cpus`: CPU 7 does not exist: this machine has CPUs 0-1",
        ),
        (
            format!("[run]\ngenerator_cpus = \"0\"\n{workload}"),
            "server and generator CPU sets overlap",
        ),
        (
            format!("[run]\nbackend = \"kqueue\"\n{workload}"),
            "must be \"auto\", \"epoll\" or \"io_uring\"",
        ),
        (
            format!("[run]\nmachine_probe = \"no\"\n{workload}"),
            "suite.toml:2:17: `run.machine_probe`: expected true or false, without quotes, found the text \"no\"",
        ),
        (
            format!("[run]\nuntil_ci = \"300%\"\n{workload}"),
            "`run.until_ci`: \"300%\" is not a fraction",
        ),
        (
            format!("[schedule]\nconnections = 0\n{workload}"),
            "suite.toml:2:15: `schedule.connections`: 0 is out of range: use 1 to 65535",
        ),
        (
            format!("[schedule]\nrates = []\n{workload}"),
            "an empty list sweeps nothing",
        ),
        (
            "name = \"x\"\n".to_string(),
            "suite.toml:2:1: `workloads`: no workload",
        ),
        (
            "[[workloads]]\nname = \"p\"\npath = \"plaintext\"\n".to_string(),
            "suite.toml:3:8: `workloads[0].path`: must start with /",
        ),
        (
            format!("{workload}{workload}"),
            "suite.toml:5:8: `workloads[1].name`: this name is already used",
        ),
        (
            "[[workloads]]\nname = \"u\"\npath = \"/upload\"\nbody_file = \"missing.bin\"\n"
                .to_string(),
            "`workloads[0].body_file`: \"missing.bin\" is not a readable file",
        ),
        (
            "targets = \"everything\"\n".to_string(),
            "is neither \"available\" nor a list",
        ),
        ("this is not toml".to_string(), "suite.toml:1:6"),
    ];
    assert_refused(&cases);
}

#[test]
fn unavailable_targets_are_skipped_with_their_reason() {
    let plan = resolve_text(
        "targets = [\"swoole-epoll\"]\n[[workloads]]\nname = \"p\"\npath = \"/plaintext\"\n",
    )
    .unwrap();
    assert!(plan.scenarios.is_empty());
    assert_eq!(plan.skipped_targets[0].target, "swoole-epoll");
    assert!(plan.skipped_targets[0].reason.contains("not loaded"));
}

#[test]
fn body_file_is_relative_to_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("body.bin"), b"abc").unwrap();
    let spec_path = dir.path().join("s.toml");
    let text = "[[workloads]]\nname = \"u\"\nmethod = \"POST\"\npath = \"/upload\"\nbody_file = \"body.bin\"\n";
    let plan = resolve(text, Some(&spec_path), &catalog()).unwrap();
    assert_eq!(
        plan.scenarios[0].workload.body,
        corobench_spec::Body::File(dir.path().join("body.bin"))
    );
}

#[test]
fn estimated_duration_counts_every_trial() {
    let plan = resolve(DEFAULT_SUITE, None, &catalog()).unwrap();
    // Window, warm-up and the overhead; the idle is the leak check's
    // patience, not counted.
    let per_trial = std::time::Duration::from_secs_f64(0.8 + 0.3 + 1.0);
    assert_eq!(
        plan.estimated_duration(std::time::Duration::from_secs(1)),
        per_trial * 4 * 6
    );
}

#[test]
fn a_targets_minimum_warm_up_raises_only_its_own_scenarios() {
    let mut catalog = catalog();
    catalog.targets[0].min_warmup = Duration::from_secs(8);
    let spec = |warmup: &str| {
        format!(
            r#"
            targets = ["go-ants", "go-nethttp"]
            [run]
            warmup = "{warmup}"
            [[workloads]]
            name = "plaintext"
            path = "/plaintext"
            "#
        )
    };
    let warmups = |text: String| -> Vec<(String, Duration)> {
        resolve(&text, None, &catalog)
            .unwrap()
            .scenarios
            .iter()
            .map(|s| (s.target.clone(), s.measurement.warmup))
            .collect()
    };
    assert_eq!(
        warmups(spec("1s")),
        [
            ("go-ants".to_string(), Duration::from_secs(8)),
            ("go-nethttp".to_string(), Duration::from_secs(1)),
        ]
    );
    assert_eq!(
        warmups(spec("10s")),
        [
            ("go-ants".to_string(), Duration::from_secs(10)),
            ("go-nethttp".to_string(), Duration::from_secs(10)),
        ]
    );
}

#[test]
fn a_budget_sets_a_goal_and_enough_trials_for_an_interval() {
    let workload = "[[workloads]]\nname = \"w\"\npath = \"/\"\n";
    let plan = resolve_text(&format!("[run]\nbudget = \"5m\"\ntrials = 3\n{workload}")).unwrap();
    assert_eq!(plan.trials.budget, Some(Duration::from_secs(300)));
    assert_eq!(
        plan.trials.until_ci,
        Some(corobench_spec::DEFAULT_BUDGET_GOAL)
    );
    assert_eq!(plan.trials.min, corobench_spec::MIN_TRIALS_FOR_INTERVAL);
    let spec = format!("[run]\nbudget = \"1m\"\nuntil_ci = \"2%\"\n{workload}");
    let plan = resolve_text(&spec).unwrap();
    assert_eq!(plan.trials.until_ci, Some(0.02));
    let goal = corobench_spec::precision_goal(&spec).unwrap();
    assert_eq!(goal.budget(), Some(Duration::from_secs(60)));
    assert!((goal.fraction - 0.02).abs() < 1e-12);
    assert_eq!(corobench_spec::precision_goal(workload), None);
    let refused = resolve_text(&format!("[run]\nbudget = \"soon\"\n{workload}")).unwrap_err();
    assert!(refused.contains("`run.budget`"), "{refused}");
    let refused = resolve_text(&format!("[run]\nbudget = \"0s\"\n{workload}")).unwrap_err();
    assert!(refused.contains("longer than 0"), "{refused}");
}
