//! Program targets in a spec: one scenario per parameter combination, the
//! server they need named once, and every mistake refused before a run.

use std::collections::BTreeMap;
use std::time::Duration;

use corobench_spec::{Catalog, CatalogProgram, CatalogTarget, Domain, Plan, resolve};

/// The units each program target's manifest declares, as in targets/.
fn declared_metrics(name: &str) -> Vec<String> {
    let units: &[&str] = match name {
        "go-ants-tasks" => &["tasks/s", "p99-ms", "B/op", "littles-bound-tasks/s"],
        _ => &["req/s", "p50-ms", "p99-ms", "B/op"],
    };
    units.iter().map(|u| (*u).to_string()).collect()
}

fn target(name: &str, program: Option<bool>, parameters: &[(&str, Domain)]) -> CatalogTarget {
    CatalogTarget {
        name: name.to_string(),
        available: Ok(()),
        parameters: parameters
            .iter()
            .map(|(n, d)| ((*n).to_string(), d.clone()))
            .collect(),
        min_warmup: Duration::ZERO,
        program: program.map(|needs_server| CatalogProgram {
            needs_server,
            metrics: declared_metrics(name),
        }),
        unserved: BTreeMap::new(),
    }
}

fn catalog() -> Catalog {
    let gomaxprocs = ("gomaxprocs", Domain::Integer { min: 1, max: 256 });
    let mode = Domain::Choice(vec!["fresh".into(), "pooled".into()]);
    let count = Domain::Integer {
        min: 1,
        max: 1_000_000,
    };
    Catalog {
        targets: vec![
            target("go-nethttp", None, std::slice::from_ref(&gomaxprocs)),
            target(
                "go-fanout-client",
                Some(true),
                &[("mode", mode), ("goroutines", count.clone())],
            ),
            target("go-ants-tasks", Some(false), &[("pool_size", count)]),
        ],
        cpus: 2,
    }
}

fn plan(spec: &str) -> Result<Plan, String> {
    resolve(spec, None, &catalog()).map_err(|e| e.to_string())
}

#[test]
fn a_program_gets_one_scenario_per_parameter_combination_and_no_workload() {
    let plan = plan(
        "targets = [\"go-ants-tasks\"]\n\
         [parameters.go-ants-tasks]\npool_size = [50, 100, 200, 300]\n",
    )
    .unwrap();
    let keys: Vec<String> = plan.scenarios.iter().map(|s| s.key.to_string()).collect();
    assert_eq!(
        keys,
        [
            "go-ants-tasks/pool_size=50/program",
            "go-ants-tasks/pool_size=100/program",
            "go-ants-tasks/pool_size=200/program",
            "go-ants-tasks/pool_size=300/program",
        ]
    );
    assert!(
        plan.scenarios
            .iter()
            .all(|s| s.program.as_ref().is_some_and(|p| p.server.is_none()))
    );
}

#[test]
fn the_server_a_program_needs_is_named_with_its_parameters() {
    let plan = plan(
        "targets = [\"go-fanout-client\"]\n\
         [parameters.go-fanout-client]\nmode = [\"fresh\", \"pooled\"]\n\
         [program]\nserver = \"go-nethttp gomaxprocs=1\"\n",
    )
    .unwrap();
    assert_eq!(plan.scenarios.len(), 2);
    let server = plan.scenarios[0]
        .program
        .as_ref()
        .unwrap()
        .server
        .as_ref()
        .unwrap();
    assert_eq!(server.to_string(), "go-nethttp gomaxprocs=1");
    assert_eq!(
        server.parameters,
        BTreeMap::from([("gomaxprocs".into(), "1".into())])
    );
}

#[test]
fn available_targets_leave_programs_out() {
    let plan = plan("[[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n").unwrap();
    let targets: Vec<&str> = plan.scenarios.iter().map(|s| s.target.as_str()).collect();
    assert_eq!(targets, ["go-nethttp"]);
}

#[test]
fn programs_and_servers_share_a_spec() {
    let plan = plan(
        "targets = [\"go-ants-tasks\", \"go-nethttp\"]\n\
         [[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n",
    )
    .unwrap();
    let keys: Vec<String> = plan.scenarios.iter().map(|s| s.key.to_string()).collect();
    assert_eq!(keys, ["go-ants-tasks/program", "go-nethttp/plaintext/c=64"]);
}

#[test]
fn server_mistakes_are_refused_with_the_key() {
    for (spec, expected) in [
        (
            "targets = [\"go-fanout-client\"]\n",
            "go-fanout-client needs a server",
        ),
        (
            "targets = [\"go-ants-tasks\"]\n[program]\nserver = \"go-nethttp\"\n",
            "no program target of this spec talks to a server",
        ),
        (
            "targets = [\"go-fanout-client\"]\n[program]\nserver = \"nginx\"\n",
            "unknown target \"nginx\"",
        ),
        (
            "targets = [\"go-fanout-client\"]\n[program]\nserver = \"go-ants-tasks\"\n",
            "go-ants-tasks is a program target",
        ),
        (
            "targets = [\"go-fanout-client\"]\n[program]\nserver = \"go-nethttp threads=2\"\n",
            "go-nethttp has no parameter \"threads\"",
        ),
        (
            "targets = [\"go-fanout-client\"]\n[program]\nserver = \"go-nethttp gomaxprocs=0\"\n",
            "gomaxprocs=\"0\" must be an integer in 1..=256",
        ),
        (
            "targets = [\"go-fanout-client\"]\n[program]\nport = 1\n",
            "`program.port`: unknown key; [program] takes: server",
        ),
    ] {
        let error = plan(spec).unwrap_err();
        assert!(error.contains(expected), "{spec}: {error}");
        let located = error.contains("program") || error.contains(":3:");
        assert!(located, "{spec}: names the key or its line: {error}");
    }
}

/// Issue "wrong successes", item 8: a parameter named twice in
/// `[program] server` kept its last value silently.
#[test]
fn a_server_parameter_named_twice_is_refused_with_both_values() {
    let spec = "targets = [\"go-fanout-client\"]\n[program]\n\
                server = \"go-nethttp gomaxprocs=1 gomaxprocs=2\"\n";
    let error = plan(spec).unwrap_err();
    assert!(
        error.contains(
            "gives gomaxprocs twice (gomaxprocs=1 and gomaxprocs=2): give each name once"
        ),
        "{error}"
    );
}

/// Issue "wrong successes", item 13: `rates` in a spec of program targets
/// alone applied to nothing and was ignored without a word.
#[test]
fn rates_in_a_spec_of_programs_alone_are_refused() {
    for spec in [
        "targets = [\"go-ants-tasks\"]\n[schedule]\nrates = [100]\n",
        "targets = [\"go-ants-tasks\"]\n[[workloads]]\nname = \"w\"\npath = \"/\"\nrates = [5]\n",
    ] {
        let error = plan(spec).unwrap_err();
        assert!(
            error.contains("every target of this spec is a program")
                && error.contains("`rates` would apply to nothing"),
            "{spec}: {error}"
        );
    }
}
