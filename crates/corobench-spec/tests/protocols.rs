//! `tls` and `protocol` as a dimension of scenarios: swept, named in keys,
//! picked by claims, left out where a target does not serve them, and
//! refused where they cannot run, each at its line.

mod common;

use std::path::Path;

use corobench_model::{ClaimScenario, Protocol};
use corobench_spec::{Catalog, Plan, resolve};

/// The shared catalog, go-ants serving no TLS.
fn catalog() -> Catalog {
    let mut catalog = common::catalog();
    let ants = catalog
        .targets
        .iter_mut()
        .find(|t| t.name == "go-ants")
        .unwrap();
    ants.unserved.insert(
        Protocol::TLS,
        "its event loop reads raw bytes and has no TLS layer".to_owned(),
    );
    catalog
}

fn plan(text: &str) -> Result<Plan, String> {
    resolve(text, Some(Path::new("suite.toml")), &catalog()).map_err(|e| e.to_string())
}

const JSON: &str = "[[workloads]]\nname = \"json\"\npath = \"/json\"\n";

fn keys(plan: &Plan) -> Vec<&str> {
    plan.scenarios.iter().map(|s| s.key.as_str()).collect()
}

#[test]
fn tls_sweeps_every_schedule_in_cleartext_then_over_tls() {
    let text = format!(
        "targets = [\"go-nethttp\"]\n[schedule]\nconnections = [8, 64]\ntls = [false, true]\n{JSON}"
    );
    let plan = plan(&text).unwrap();
    assert_eq!(
        keys(&plan),
        [
            "go-nethttp/json/c=8",
            "go-nethttp/json/c=8/tls",
            "go-nethttp/json/c=64",
            "go-nethttp/json/c=64/tls",
        ]
    );
    assert_eq!(plan.scenarios[1].schedule.protocol, Protocol::TLS);
    assert!(plan.scenarios[0].schedule.protocol.is_http1());
}

#[test]
fn a_workload_sets_its_own_protocol_and_keeps_its_connection_use() {
    let text = "targets = [\"go-nethttp\"]\n[[workloads]]\nname = \"short\"\npath = \"/json\"\n\
                keepalive = false\ntls = true\nprotocol = \"http/1.1\"\n";
    let plan = plan(text).unwrap();
    assert_eq!(keys(&plan), ["go-nethttp/short/c=64/no-keepalive/tls"]);
}

#[test]
fn a_target_that_does_not_serve_tls_is_skipped_over_tls_with_its_reason() {
    let text =
        format!("targets = [\"go-nethttp\", \"go-ants\"]\n[schedule]\ntls = [false, true]\n{JSON}");
    let plan = plan(&text).unwrap();
    assert_eq!(
        keys(&plan),
        [
            "go-nethttp/json/c=64",
            "go-nethttp/json/c=64/tls",
            "go-ants/json/c=64",
        ]
    );
    let skipped = &plan.skipped_protocols;
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0].target, "go-ants");
    assert_eq!(skipped[0].protocol, Protocol::TLS);
    let line = skipped[0].line();
    assert!(
        line.contains("go-ants over tls (1 scenario)") && line.contains("no TLS layer"),
        "{line}"
    );
}

#[test]
fn claims_pick_a_protocol_and_one_not_served_is_not_measured() {
    let claim = "[[claims]]\nsource = \"a blog post\"\nsays = \"TLS costs Go 20%\"\n\
                 workload = \"json\"\nmetric = \"rps\"\nratio = 0.8\n";
    let head = format!(
        "targets = [\"go-nethttp\", \"go-ants\"]\n[schedule]\ntls = [false, true]\n{JSON}{claim}"
    );
    let picked = plan(&format!(
        "{head}a = \"go-nethttp tls=true\"\nb = \"go-nethttp tls=false\"\n"
    ))
    .unwrap();
    let claim = &picked.claims[0];
    assert!(
        matches!(&claim.a.resolved, ClaimScenario::Scenario(k) if k.as_str() == "go-nethttp/json/c=64/tls")
    );
    let unserved = plan(&format!(
        "{head}a = \"go-ants tls=true\"\nb = \"go-nethttp tls=true\"\n"
    ))
    .unwrap();
    assert!(
        matches!(&unserved.claims[0].a.resolved, ClaimScenario::Unavailable(why) if why.contains("does not serve tls")),
        "{:?}",
        unserved.claims[0].a
    );
    let ambiguous = plan(&format!("{head}a = \"go-nethttp\"\nb = \"go-ants\"\n")).unwrap_err();
    assert!(
        ambiguous.contains("matches 2 scenarios") && ambiguous.contains("tls=false"),
        "{ambiguous}"
    );
}

#[test]
fn http2_carries_its_streams_and_tls_its_resumption() {
    let text = format!(
        "targets = [\"go-nethttp\"]\n[schedule]\nconnections = 10\n\
         protocol = [\"http/1.1\", \"h2c\", \"h2\"]\nstreams = 10\n{JSON}"
    );
    let swept = plan(&text).unwrap();
    assert_eq!(
        keys(&swept),
        [
            "go-nethttp/json/c=10",
            "go-nethttp/json/c=10/h2c/m=10",
            "go-nethttp/json/c=10/h2/m=10",
        ],
        "streams apply to the HTTP/2 schedules only"
    );
    assert_eq!(swept.scenarios[0].schedule.streams, 1);
    assert_eq!(swept.scenarios[2].schedule.streams, 10);
    let full = "targets = [\"go-nethttp\"]\n[[workloads]]\nname = \"short\"\npath = \"/json\"\n\
                keepalive = false\ntls = [false, true]\ntls_resume = false\n";
    let full = plan(full).unwrap();
    assert_eq!(
        keys(&full),
        [
            "go-nethttp/short/c=64/no-keepalive",
            "go-nethttp/short/c=64/no-keepalive/tls/no-resume",
        ]
    );
    assert!(!full.scenarios[1].schedule.tls_resume);
    assert!(
        full.scenarios[0].schedule.tls_resume,
        "cleartext has no sessions"
    );
}

#[test]
fn streams_and_resumption_where_they_mean_nothing_are_refused() {
    let cases = [
        ("streams = 10", "is HTTP/2's"),
        (
            "tls_resume = false",
            "no protocol of this schedule speaks TLS",
        ),
        (
            "protocol = \"h2c\"\npipeline = 16",
            "pipelining is HTTP/1.1's",
        ),
        ("protocol = \"h2\"\nstreams = 0", "streams"),
    ];
    for (lines, expected) in cases {
        let text = format!("targets = [\"go-nethttp\"]\n[schedule]\n{lines}\n{JSON}");
        let error = plan(&text).unwrap_err();
        assert!(error.contains(expected), "{lines}: {error}");
    }
}

#[test]
fn bad_protocol_values_are_refused_at_their_place() {
    let cases = [
        ("protocol = \"tls\"", "TLS is its own key"),
        ("protocol = \"h3\"", "\"h3\" is not a protocol"),
        ("tls = \"yes\"", "true or false"),
        ("tls = [true, true]", "repeats true"),
        ("protocol = []", "sweeps nothing"),
    ];
    for (line, expected) in cases {
        let text = format!("targets = [\"go-nethttp\"]\n[schedule]\n{line}\n{JSON}");
        let error = plan(&text).unwrap_err();
        assert!(
            error.contains("suite.toml:3:") && error.contains(expected),
            "{line}: {error}"
        );
    }
}

#[test]
fn idle_workloads_take_tls_alone_and_runs_across_hosts_take_every_protocol() {
    let idle = |extra: &str| {
        format!(
            "targets = [\"go-nethttp\"]\n[[workloads]]\nname = \"idle\"\npath = \"/plaintext\"\n\
             idle_connections = [100, 1000]\n{extra}\n"
        )
    };
    let swept = plan(&idle("tls = [false, true]")).unwrap();
    let shapes: Vec<(Protocol, u32)> = swept
        .scenarios
        .iter()
        .map(|s| (s.schedule.protocol, s.schedule.connections))
        .collect();
    assert_eq!(
        shapes,
        [
            (Protocol::HTTP1, 100),
            (Protocol::HTTP1, 1000),
            (Protocol::TLS, 100),
            (Protocol::TLS, 1000)
        ]
    );
    let error = plan(&idle("protocol = \"h2c\"")).unwrap_err();
    assert!(error.contains("takes no protocol"), "{error}");
    let across = |schedule: &str| {
        let text = format!(
            "targets = [\"go-nethttp\"]\n[schedule]\nconnections = 4\n{schedule}\n{JSON}\
             [hosts]\nserver = \"ssh://a\"\ngenerators = [\"ssh://b\"]\n"
        );
        let across = plan(&text).unwrap();
        assert!(across.hosts.is_some());
        let protocols = across.scenarios.iter().map(|s| s.schedule.protocol);
        protocols.collect::<Vec<Protocol>>()
    };
    assert_eq!(across("tls = true"), [Protocol::TLS]);
    assert_eq!(
        across("protocol = [\"h2c\", \"h2\"]\nstreams = 8"),
        [Protocol::H2C, Protocol::H2]
    );
}

#[test]
fn a_background_request_rides_on_http2_workloads_only() {
    let text = "targets = [\"go-nethttp\"]\n[[workloads]]\nname = \"hol\"\npath = \"/plaintext\"\n\
                protocol = \"h2c\"\nconnections = [1, 10]\nstreams = 10\n\
                background = \"/io?ms=200\"\n";
    let planned = plan(text).unwrap();
    assert_eq!(planned.scenarios.len(), 2);
    for scenario in &planned.scenarios {
        let background = scenario.workload.background.as_ref().unwrap();
        assert_eq!(
            (background.path.as_str(), background.streams),
            ("/io?ms=200", 1)
        );
    }
    let streams = format!("{text}background_streams = 3\n");
    assert_eq!(
        plan(&streams).unwrap().scenarios[0]
            .workload
            .background
            .as_ref()
            .map(|b| b.streams),
        Some(3)
    );
    for (spec, says) in [
        (
            text.replace("protocol = \"h2c\"\n", "")
                .replace("streams = 10\n", ""),
            "only HTTP/2 has",
        ),
        (
            text.replace("\"/io?ms=200\"", "\"io\""),
            "must start with /",
        ),
        (
            text.replace("background = \"/io?ms=200\"\n", "background_streams = 2\n"),
            "background_streams needs the request they carry",
        ),
        (
            format!("{text}background_streams = 0\n"),
            "background_streams",
        ),
    ] {
        let error = plan(&spec).unwrap_err();
        assert!(error.contains(says), "{spec}\n→ {error}");
    }
}
