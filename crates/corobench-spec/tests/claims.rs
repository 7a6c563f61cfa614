//! `[[claims]]` and `baseline`: published figures resolved to the plan's
//! scenarios, and every mistake refused at its place.

mod common;

use std::path::Path;
use std::time::Duration;

use corobench_model::{
    ClaimDirection, ClaimExpectation, ClaimScenario, Metric, ProgramUnit, PublishedValues,
};
use corobench_spec::{Catalog, CatalogProgram, CatalogTarget, Domain, Plan, resolve};

/// The shared catalog, plus a program target that reports tasks/s.
fn catalog() -> Catalog {
    let mut catalog = common::catalog();
    catalog.targets.push(CatalogTarget {
        name: "go-ants-tasks".into(),
        available: Ok(()),
        parameters: [(
            "pool_size".to_string(),
            Domain::Integer {
                min: 1,
                max: 100_000,
            },
        )]
        .into(),
        min_warmup: Duration::ZERO,
        program: Some(CatalogProgram {
            needs_server: false,
            metrics: vec!["tasks/s".into(), "B/op".into()],
        }),
        unserved: std::collections::BTreeMap::new(),
    });
    catalog
}

fn plan(text: &str) -> Result<Plan, String> {
    resolve(text, Some(Path::new("suite.toml")), &catalog()).map_err(|e| e.to_string())
}

/// go-nethttp, and go-ants at two pool sizes, each at 64 connections, on
/// two workloads.
const SERVERS: &str = r#"targets = ["go-nethttp", "go-ants", "swoole-epoll"]
[parameters.go-ants]
pool_size = [4, 64]
[[workloads]]
name = "plaintext"
path = "/plaintext"
[[workloads]]
name = "json"
path = "/json"
"#;

fn servers_with(claim: &str) -> String {
    format!("{SERVERS}[[claims]]\nsource = \"a blog post\"\nsays = \"A beats B\"\n{claim}")
}

fn key(scenario: &ClaimScenario) -> &str {
    match scenario {
        ClaimScenario::Scenario(key) => key.as_str(),
        ClaimScenario::Unavailable(reason) => reason,
    }
}

#[test]
fn a_ratio_claim_resolves_to_one_scenario_per_side() {
    let plan = plan(&servers_with(
        "workload = \"plaintext\"\nmetric = \"rps\"\na = \"go-ants pool_size=64\"\nb = \"go-nethttp\"\nratio = 1.5\npublished = [30000, 20000]\n",
    ))
    .unwrap();
    let claim = &plan.claims[0];
    assert_eq!(claim.source, "a blog post");
    assert_eq!(claim.says, "A beats B");
    assert_eq!(claim.metric, Metric::RequestsPerS);
    assert_eq!(claim.workload.as_deref(), Some("plaintext"));
    assert_eq!(
        key(&claim.a.resolved),
        "go-ants/pool_size=64/plaintext/c=64"
    );
    assert_eq!(claim.a.selector, "go-ants pool_size=64");
    assert_eq!(key(&claim.b.resolved), "go-nethttp/plaintext/c=64");
    assert_eq!(
        claim.expectation,
        ClaimExpectation::Ratio {
            ratio: 1.5,
            tolerance: 0.10
        }
    );
    assert_eq!(
        claim.published,
        Some(PublishedValues {
            a: 30_000.0,
            b: 20_000.0
        })
    );
}

#[test]
fn a_figure_only_a_has_is_a_direction() {
    let plan = plan(&servers_with(
        "workload = \"json\"\nmetric = \"error_rate\"\na = \"go-nethttp\"\nb = \"go-ants pool_size=4\"\ndirection = \"a > 0, b = 0\"\n",
    ))
    .unwrap();
    assert_eq!(
        plan.claims[0].expectation,
        ClaimExpectation::Direction {
            direction: ClaimDirection::OnlyA
        }
    );
}

#[test]
fn directions_tolerances_and_latency_words() {
    let plan = plan(&servers_with(
        "workload = \"json\"\nmetric = \"p99.9\"\na = \"go-ants pool_size=+004\"\nb = \"go-nethttp c=64\"\ndirection = \"a < b\"\n\
         [[claims]]\nsource = \"s\"\nsays = \"t\"\nworkload = \"json\"\nmetric = \"error_rate\"\na = \"go-nethttp\"\nb = \"go-ants pool_size=4\"\nratio = 2\ntolerance = \"25%\"\n",
    ))
    .unwrap();
    assert_eq!(plan.claims[0].metric, Metric::LatencyP999Us);
    assert_eq!(
        plan.claims[0].expectation,
        ClaimExpectation::Direction {
            direction: ClaimDirection::ALess
        }
    );
    assert_eq!(
        key(&plan.claims[0].a.resolved),
        "go-ants/pool_size=4/json/c=64"
    );
    assert_eq!(plan.claims[1].metric, Metric::ErrorRate);
    assert_eq!(
        plan.claims[1].expectation,
        ClaimExpectation::Ratio {
            ratio: 2.0,
            tolerance: 0.25
        }
    );
}

#[test]
fn claims_name_what_a_request_costs_the_kernel() {
    let plan = plan(&servers_with(
        "workload = \"plaintext\"\nmetric = \"syscalls\"\na = \"go-ants pool_size=4\"\nb = \"go-nethttp\"\ndirection = \"a < b\"\n\
         [[claims]]\nsource = \"s\"\nsays = \"t\"\nworkload = \"plaintext\"\nmetric = \"ctx_switches\"\na = \"go-nethttp\"\nb = \"go-ants pool_size=4\"\nratio = 2\n",
    ))
    .unwrap();
    let metrics: Vec<&str> = plan.claims.iter().map(|c| c.metric.label()).collect();
    assert_eq!(metrics, ["syscalls/req", "ctx switches/req"]);
}

#[test]
fn a_side_that_cannot_run_here_is_not_measured_with_its_reason() {
    let plan = plan(&servers_with(
        "workload = \"plaintext\"\nmetric = \"rps\"\na = \"swoole-epoll workers=2\"\nb = \"go-nethttp\"\nratio = 1.5\n",
    ))
    .unwrap();
    let side = &plan.claims[0].a;
    assert_eq!(side.target, "swoole-epoll");
    assert!(
        matches!(&side.resolved, ClaimScenario::Unavailable(reason) if reason.contains("not loaded"))
    );
}

#[test]
fn a_program_claim_names_a_figure_its_manifest_declares() {
    let plan = plan(
        "targets = [\"go-ants-tasks\"]\n[parameters.go-ants-tasks]\npool_size = [50, 200]\n\
         [[claims]]\nsource = \"s\"\nsays = \"a pool of 200 doubles the rate\"\nmetric = \"tasks/s\"\n\
         a = \"go-ants-tasks pool_size=200\"\nb = \"go-ants-tasks pool_size=50\"\nratio = 1.19\n",
    )
    .unwrap();
    let claim = &plan.claims[0];
    assert_eq!(claim.metric, Metric::Program(ProgramUnit::new("tasks/s")));
    assert_eq!(claim.workload, None);
    assert_eq!(
        key(&claim.a.resolved),
        "go-ants-tasks/pool_size=200/program"
    );
    assert_eq!(key(&claim.b.resolved), "go-ants-tasks/pool_size=50/program");
}

#[test]
fn the_baseline_is_a_target_the_spec_asks_for() {
    let plan = plan(&format!("baseline = \"go-nethttp\"\n{SERVERS}")).unwrap();
    assert_eq!(plan.baseline.as_deref(), Some("go-nethttp"));
    // A baseline that is skipped here still plans: the run falls back.
    let plan = plan_text("baseline = \"swoole-epoll\"\n");
    assert_eq!(plan.baseline.as_deref(), Some("swoole-epoll"));
    assert!(plan.claims.is_empty());
}

fn plan_text(head: &str) -> Plan {
    plan(&format!("{head}{SERVERS}")).unwrap()
}

/// Each spec fails with a message holding the expected fragment.
fn assert_refused(cases: &[(String, &str)]) {
    for (spec, expected) in cases {
        let error = plan(spec).expect_err(spec);
        assert!(
            error.contains(expected),
            "spec:\n{spec}\n  gives: {error}\n  wants: {expected}"
        );
    }
}

/// A claim on plaintext between `a` and `b` with `rest` after it.
fn claim(a: &str, b: &str, rest: &str) -> String {
    servers_with(&format!(
        "workload = \"plaintext\"\nmetric = \"rps\"\na = \"{a}\"\nb = \"{b}\"\n{rest}"
    ))
}

#[test]
fn selectors_must_name_exactly_one_scenario() {
    let cases = [
        (
            "go-ants",
            "suite.toml:15:5: `claims[0].a`: \"go-ants\" matches 2 scenarios; add parameters, e.g. \"go-ants pool_size=4\"",
        ),
        (
            "go-nethttp c=8",
            "suite.toml:15:5: `claims[0].a`: no scenario of \"go-nethttp c=8\" with workload plaintext; the plan has: go-nethttp/plaintext/c=64, go-nethttp/json/c=64",
        ),
        (
            "go-ants pool_size=8",
            "no scenario of \"go-ants pool_size=8\" with workload plaintext",
        ),
        (
            "go-nethtp",
            "`claims[0].a`: unknown target \"go-nethtp\"; known targets: go-ants, go-nethttp",
        ),
        (
            "go-ants-tasks",
            "\"go-ants-tasks\" is not among this spec's targets; add it to `targets`",
        ),
        (
            "go-ants pool=4",
            "go-ants has no parameter \"pool\"; its parameters: nonblocking, pool_size, queue_length",
        ),
        (
            "go-ants pool_size=0",
            "pool_size=\"0\" must be an integer in 1..=100000",
        ),
        (
            "go-ants pool_size=4 queue_length=10",
            "the spec does not set queue_length for go-ants",
        ),
        ("go-ants pool_size", "\"pool_size\" is not name=value"),
        ("go-nethttp c=x", "c=\"x\" is not a number of connections"),
        ("", "is empty; name a target"),
    ];
    let cases: Vec<(String, &str)> = cases
        .iter()
        .map(|(a, expected)| (claim(a, "go-nethttp", "ratio = 2\n"), *expected))
        .collect();
    assert_refused(&cases);
}

#[test]
fn workloads_and_metrics_are_checked() {
    let no_workload = servers_with(
        "metric = \"rps\"\na = \"go-nethttp\"\nb = \"go-ants pool_size=4\"\nratio = 2\n",
    );
    let other_workload = no_workload.replace("metric", "workload = \"db\"\nmetric");
    assert_refused(&[
        (
            no_workload,
            "`claims[0].workload`: missing: add workload = \"plaintext\" (this spec's workloads: plaintext, json)",
        ),
        (
            other_workload,
            "suite.toml:13:12: `claims[0].workload`: no workload \"db\" in this spec; its workloads: plaintext, json",
        ),
        (
            claim("go-nethttp", "go-ants pool_size=4", "ratio = 2\n").replace("\"rps\"", "\"p90\""),
            "`claims[0].metric`: \"p90\" is not a figure corobench measures for a server; use one of: rps, mean, p50, p99, p99.9, cpu, rss, error_rate",
        ),
        (
            "targets = [\"go-ants-tasks\"]\n[parameters.go-ants-tasks]\npool_size = [50, 200]\n\
             [[claims]]\nsource = \"s\"\nsays = \"t\"\nmetric = \"req/s\"\n\
             a = \"go-ants-tasks pool_size=200\"\nb = \"go-ants-tasks pool_size=50\"\nratio = 1.19\n"
                .to_string(),
            "suite.toml:7:10: `claims[0].metric`: go-ants-tasks reports no figure in \"req/s\"; its manifest declares: tasks/s, B/op",
        ),
        (
            "targets = [\"go-ants-tasks\"]\n[[claims]]\nsource = \"s\"\nsays = \"t\"\nworkload = \"p\"\nmetric = \"tasks/s\"\n\
             a = \"go-ants-tasks\"\nb = \"go-ants-tasks\"\nratio = 1\n"
                .to_string(),
            "`claims[0].workload`: program targets run no workload; remove `workload`",
        ),
        (
            "targets = [\"go-ants-tasks\", \"go-nethttp\"]\n[[workloads]]\nname = \"p\"\npath = \"/plaintext\"\n\
             [[claims]]\nsource = \"s\"\nsays = \"t\"\nmetric = \"rps\"\na = \"go-ants-tasks\"\nb = \"go-nethttp\"\nratio = 1\n"
                .to_string(),
            "`claims[0].b`: a names a program target and b a server target",
        ),
    ]);
}

#[test]
fn what_a_claim_expects_is_checked() {
    let (a, b) = ("go-nethttp", "go-ants pool_size=4");
    assert_refused(&[
        (
            claim(a, b, "ratio = 0\n"),
            "suite.toml:17:9: `claims[0].ratio`: 0 is not a ratio: the published a/b is greater than 0",
        ),
        (claim(a, b, "ratio = -3\n"), "-3 is not a ratio"),
        (
            claim(a, b, "ratio = nan\n"),
            "`claims[0].ratio`: nan is not a finite number: write e.g. 3.06",
        ),
        (claim(a, b, "ratio = inf\n"), "inf is not a finite number"),
        (claim(a, b, "ratio = 1e7\n"), "1e7 is not a ratio"),
        (
            claim(a, b, "ratio = \"3\"\n"),
            "write the number without quotes: ratio = 3",
        ),
        (
            claim(a, b, "ratio = [3]\n"),
            "expected a number such as 3.06, found a list",
        ),
        (
            claim(a, b, "ratio = 2\ndirection = \"a>b\"\n"),
            "suite.toml:18:1: `claims[0].direction`: give either ratio (the published a/b) or direction, not both",
        ),
        (
            claim(a, b, ""),
            "`claims[0].ratio`: missing: add ratio = 3.06 (the published a/b) or direction = \"a>b\"",
        ),
        (
            claim(a, b, "direction = \"up\"\n"),
            "\"up\" must be \"a>b\", \"a<b\" or \"a>0, b=0\" (a above zero, b zero)",
        ),
        (
            claim(a, b, "direction = \"a>b\"\ntolerance = \"5%\"\n"),
            "a direction has no tolerance",
        ),
        (
            claim(a, b, "ratio = 2\ntolerance = \"150%\"\n"),
            "`claims[0].tolerance`: \"150%\" is not a fraction",
        ),
        (
            claim(a, b, "ratio = 2\ntolerance = 0\n"),
            "`claims[0].tolerance`: expected a fraction",
        ),
        (
            claim(a, b, "ratio = 2\npublished = [1]\n"),
            "`claims[0].published`: expected a list of the two published figures",
        ),
        (
            claim(a, b, "ratio = 2\npublished = [1, -2]\n"),
            "a published figure is 0 or more",
        ),
        (
            claim(a, b, "ratio = 2\npublished = [1, nan]\n"),
            "nan is not a finite number",
        ),
        (
            claim(a, b, "ratio = 2\nstatus = \"x\"\n"),
            "`claims[0].status`: unknown key; [[claims]] takes: source, says",
        ),
    ]);
}

#[test]
fn texts_and_tables_are_checked() {
    assert_refused(&[
        (
            format!("{SERVERS}[[claims]]\nsays = \"t\"\n"),
            "`claims[0].source`: missing: add source = ",
        ),
        (
            format!("{SERVERS}[[claims]]\nsource = \"two\\nlines\"\n"),
            "`claims[0].source`: contains a control character",
        ),
        (
            format!("{SERVERS}[[claims]]\nsource = \" \"\n"),
            "`claims[0].source`: is empty",
        ),
        (
            format!("claims = [1]\n{SERVERS}"),
            "suite.toml:1:11: `claims[0]`: expected a [[claims]] table",
        ),
        (format!("ratio = 2\n{SERVERS}"), "it belongs in [[claims]]"),
        (
            format!("baseline = \"nginx\"\n{SERVERS}"),
            "suite.toml:1:12: `baseline`: unknown target \"nginx\"",
        ),
        (
            format!("baseline = \"go-ants-tasks\"\n{SERVERS}"),
            "`baseline`: \"go-ants-tasks\" is not among this spec's targets",
        ),
    ]);
}
