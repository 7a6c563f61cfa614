//! `corobench report` and `corobench compare` as a user runs them, on the
//! stored fixture runs: every format, the JSON schema, files, colour, and
//! the errors that must exit 2.

mod lab;

use lab::{Fixture, ok, repo_path, stderr, stdout, usage_error};

const ANALYSIS_FIXTURE: &str = "crates/corobench-report/tests/fixtures/run-analysis.json";
const COMPARISON_FIXTURE: &str = "crates/corobench-report/tests/fixtures/run-comparison.json";
const CLAIMS_FIXTURE: &str = "crates/corobench-report/tests/fixtures/claims.json";
/// Hand-made: no stored fixture run searched capacity.
const CAPACITY_FIXTURE: &str = "crates/corobench-report/tests/fixtures/capacity.json";
const CLAIMS_SPEC: &str = "crates/corobench/tests/fixtures/report/spec-a-claims.toml";

#[test]
fn every_report_format_renders_the_fixture_run() {
    let fixture = Fixture::new();
    for format in [
        "table",
        "md",
        "json",
        "csv",
        "csv-trials",
        "gobench",
        "html",
    ] {
        let output = fixture.corobench(&["report", &fixture.run_a, "--format", format]);
        let text = ok(&output);
        assert!(text.len() > 1000, "{format}: {} bytes", text.len());
        assert!(stderr(&output).is_empty(), "{format}: {}", stderr(&output));
    }
}

#[test]
fn every_comparison_format_renders_the_fixture_runs() {
    let fixture = Fixture::new();
    for format in ["table", "md", "json", "csv"] {
        let output = fixture.corobench(&[
            "compare",
            &fixture.run_a,
            &fixture.run_b,
            "--format",
            format,
        ]);
        assert!(ok(&output).len() > 1000, "{format}");
    }
}

#[test]
fn json_documents_validate_against_the_schema() {
    let schema_text = std::fs::read_to_string(repo_path("docs/schema/report.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&schema_text).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    // The same schema rooted at each kind, so a mismatch names its field
    // instead of "not valid under any of the schemas listed in oneOf".
    let rooted = |kind: &str| {
        let mut narrowed = schema.clone();
        let root = narrowed.as_object_mut().unwrap();
        root.remove("oneOf");
        root.insert("$ref".into(), format!("#/$defs/{kind}").into());
        jsonschema::validator_for(&narrowed).unwrap()
    };
    let fixture = Fixture::new();
    let report = ok(&fixture.corobench(&["report", &fixture.run_a, "--format", "json"]));
    let compare = ok(&fixture.corobench(&[
        "compare",
        &fixture.run_a,
        &fixture.run_b,
        "--format",
        "json",
    ]));
    let with_claims = serde_json::to_string(&run_a_with_claims(&fixture)).unwrap();
    let with_capacity = serde_json::to_string(&fixture_with_capacity()).unwrap();
    let with_profiles = serde_json::to_string(&run_a_with_profiles(&fixture)).unwrap();
    let speaking = serde_json::to_string(&run_a_speaking(&fixture)).unwrap();
    assert!(
        !with_profiles.contains("main;write"),
        "stacks stay out of JSON"
    );
    for (kind, text) in [
        ("run_analysis", report),
        ("run_comparison", compare),
        ("run_analysis", with_claims),
        ("run_analysis", with_capacity),
        ("run_analysis", with_profiles),
        ("run_analysis", speaking),
    ] {
        let document: serde_json::Value = serde_json::from_str(&text).unwrap();
        let errors: Vec<String> = rooted(kind)
            .iter_errors(&document)
            .take(5)
            .map(|e| format!("{:?} at {}", e.kind(), e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{kind}: {errors:#?}");
        assert!(validator.is_valid(&document), "{kind}");
    }
}

/// The fixture analysis with the capacity analysis corobench-report's
/// capacity snapshots render, and the settings it was searched with.
fn fixture_with_capacity() -> corobench_model::RunAnalysis {
    let read = |path: &str| std::fs::read_to_string(repo_path(path)).unwrap();
    let mut analysis: corobench_model::RunAnalysis =
        serde_json::from_str(&read(ANALYSIS_FIXTURE)).unwrap();
    let capacity: corobench_model::CapacityAnalysis =
        serde_json::from_str(&read(CAPACITY_FIXTURE)).unwrap();
    analysis.run.capacity = Some(capacity.settings.clone());
    analysis.capacity = Some(capacity);
    analysis
}

/// The analysis documents corobench-report's snapshot tests render are this
/// binary's output for the fixture runs; `COROBENCH_UPDATE_FIXTURES=1`
/// rewrites them.
#[test]
fn fixtures_are_current() {
    let fixture = Fixture::new();
    let report = ok(&fixture.corobench(&["report", &fixture.run_a, "--format", "json"]));
    let compare = ok(&fixture.corobench(&[
        "compare",
        &fixture.run_a,
        &fixture.run_b,
        "--format",
        "json",
    ]));
    let update = std::env::var_os("COROBENCH_UPDATE_FIXTURES").is_some();
    let claims = serde_json::to_string_pretty(&run_a_with_claims(&fixture).claims).unwrap() + "\n";
    for (path, fresh) in [
        (ANALYSIS_FIXTURE, report),
        (COMPARISON_FIXTURE, compare),
        (CLAIMS_FIXTURE, claims),
    ] {
        let path = repo_path(path);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &fresh).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == fresh,
            "{} is not what corobench prints for the fixture runs; regenerate it with \
             COROBENCH_UPDATE_FIXTURES=1 cargo test -p corobench --test report_cli fixtures_are_current",
            path.display()
        );
    }
}

/// Run A analysed with spec-a-claims.toml's claims: resolved as `corobench
/// run` resolves them (against targets where swoole-uring cannot run),
/// stored with the run, and judged as `report` judges them.
fn run_a_with_claims(fixture: &Fixture) -> corobench_model::RunAnalysis {
    let path = repo_path(CLAIMS_SPEC);
    let text = std::fs::read_to_string(&path).unwrap();
    let plan = corobench_spec::resolve(&text, Some(&path), &claims_catalog()).unwrap();
    let store = corobench_store::Store::open_existing(&fixture.db).unwrap();
    let mut run = store.load_run(&fixture.run_a).unwrap();
    let planned: Vec<&str> = plan.scenarios.iter().map(|s| s.key.as_str()).collect();
    let stored: Vec<&str> = run.scenarios.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(planned, stored, "the claims spec plans run A's scenarios");
    run.run.claims = plan.claims;
    let options = corobench_analyze::AnalyzeOptions::default();
    corobench_analyze::analyze_run(&run, &options).unwrap()
}

/// Run A analysed with a captured profile of its first scenario and a
/// skipped one of its second, and two fits of memory per connection.
fn run_a_with_profiles(fixture: &Fixture) -> corobench_model::RunAnalysis {
    let store = corobench_store::Store::open_existing(&fixture.db).unwrap();
    let mut run = store.load_run(&fixture.run_a).unwrap();
    run.profiles = lab::two_profiles();
    let options = corobench_analyze::AnalyzeOptions::default();
    let mut analysis = corobench_analyze::analyze_run(&run, &options).unwrap();
    // And memory per connection: one fit with an interval, one without.
    let fit = corobench_model::MemoryPerConnection {
        label: "go-nethttp".to_owned(),
        workload: "idle".to_owned(),
        scenarios: vec![0, 1],
        connections: vec![1000, 5000],
        trials: 6,
        bytes_per_connection: Some(8192.5),
        interval: Some((8000.0, 8400.0)),
        intercept_bytes: Some(4e6),
        note: None,
    };
    let unfitted = corobench_model::MemoryPerConnection {
        connections: vec![1000],
        bytes_per_connection: None,
        interval: None,
        intercept_bytes: None,
        note: Some("one number of connections only".to_owned()),
        ..fit.clone()
    };
    analysis.memory_per_connection = vec![fit, unfitted];
    analysis
}

/// Run A analysed as if its first scenarios had spoken h2 with 10
/// streams, TLS with full handshakes and h2c with 4 streams.
fn run_a_speaking(fixture: &Fixture) -> corobench_model::RunAnalysis {
    use corobench_model::Protocol;
    let store = corobench_store::Store::open_existing(&fixture.db).unwrap();
    let mut run = store.load_run(&fixture.run_a).unwrap();
    let spoken = [
        (Protocol::H2, 10, true),
        (Protocol::TLS, 1, false),
        (Protocol::H2C, 4, true),
    ];
    for (scenario, (protocol, streams, tls_resume)) in run.scenarios.iter_mut().zip(spoken) {
        scenario.protocol = protocol;
        (scenario.wire.streams, scenario.wire.tls_resume) = (streams, tls_resume);
    }
    // The h2c scenario keeps a slow stream beside its measured ones.
    run.scenarios[2].workload.background = Some(corobench_model::BackgroundRecord {
        path: "/io?ms=200".to_owned(),
        streams: 1,
    });
    let options = corobench_analyze::AnalyzeOptions::default();
    let analysis = corobench_analyze::analyze_run(&run, &options).unwrap();
    let first = serde_json::to_value(&analysis.scenarios[0]).unwrap();
    assert_eq!(
        (&first["protocol"], &first["streams"]),
        (&"h2".into(), &10.into())
    );
    analysis
}

/// The fixture's targets as the spec resolver sees them, and swoole-uring,
/// which cannot run here.
fn claims_catalog() -> corobench_spec::Catalog {
    use corobench_spec::{CatalogTarget, Domain};
    let target = |name: &str, available: Result<(), String>| CatalogTarget {
        name: name.to_owned(),
        available,
        parameters: std::collections::BTreeMap::new(),
        min_warmup: std::time::Duration::ZERO,
        program: None,
        unserved: std::collections::BTreeMap::new(),
    };
    let mut ants = target("go-ants", Ok(()));
    let sizes = Domain::Integer {
        min: 1,
        max: 1_000_000,
    };
    ants.parameters.insert("pool_size".to_owned(), sizes);
    let missing = "`php` is not on PATH (build the Swoole 6 extension with --enable-iouring; see \
                   targets/swoole-uring/README.md)";
    corobench_spec::Catalog {
        targets: vec![
            target("go-nethttp", Ok(())),
            ants,
            target("node-http", Ok(())),
            target("swoole-uring", Err(missing.to_owned())),
        ],
        cpus: 2,
    }
}

#[test]
fn the_table_compares_req_s_and_p99_unless_asked_for_every_metric() {
    let fixture = Fixture::new();
    let compact = ok(&fixture.corobench(&["report", &fixture.run_a]));
    let detail = ok(&fixture.corobench(&["report", &fixture.run_a, "--detail"]));
    // `peak RSS` names a compared metric only; the scenario tables say `RSS`.
    assert!(!compact.contains("peak RSS"), "{compact}");
    assert!(compact.contains("`corobench report --detail`"), "{compact}");
    assert!(detail.contains("peak RSS"), "{detail}");
    let markdown = ok(&fixture.corobench(&["report", &fixture.run_a, "--format", "md"]));
    assert!(
        markdown.contains("peak RSS"),
        "the other formats compare every metric"
    );
    // A run without claims has none to list, nor one without a capacity search.
    for format in ["csv-claims", "csv-capacity"] {
        let csv = ok(&fixture.corobench(&["report", &fixture.run_a, "--format", format]));
        assert_eq!(csv.lines().count(), 1, "{format}: {csv}");
    }
}

#[test]
fn the_table_compares_with_the_first_target_or_the_chosen_one() {
    let fixture = Fixture::new();
    let table = ok(&fixture.corobench(&["report", &fixture.run_a]));
    assert!(table.contains("vs go-nethttp"), "{table}");
    assert!(table.contains("(p=0.002 n=6)"), "{table}");
    let table = ok(&fixture.corobench(&["report", &fixture.run_a, "--baseline", "node-http"]));
    assert!(table.contains("vs node-http"), "{table}");
    assert!(!table.contains("vs go-nethttp"), "{table}");
}

#[test]
fn an_unknown_baseline_exits_2_and_lists_the_targets() {
    let fixture = Fixture::new();
    let message =
        usage_error(&fixture.corobench(&["report", &fixture.run_a, "--baseline", "nginx"]));
    assert!(
        message.contains("--baseline nginx") && message.contains("go-nethttp, go-ants, node-http"),
        "{message}"
    );
}

#[test]
fn unknown_runs_exit_2_and_name_the_candidates() {
    let fixture = Fixture::new();
    for args in [
        vec!["report", "no-such-run"],
        vec!["compare", fixture.run_a.as_str(), "no-such-run"],
        vec!["compare", "no-such-run", fixture.run_b.as_str()],
    ] {
        let message = usage_error(&fixture.corobench(&args));
        assert!(message.contains("no run `no-such-run`"), "{message}");
        assert!(
            message.contains(&fixture.run_a) && message.contains(&fixture.run_b),
            "{message}"
        );
    }
    // A prefix both runs share is ambiguous: both are named.
    let shared: String = fixture
        .run_a
        .chars()
        .zip(fixture.run_b.chars())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a)
        .collect();
    let message = usage_error(&fixture.corobench(&["report", &shared]));
    assert!(message.contains("matches several runs"), "{message}");
}

#[test]
fn a_missing_database_exits_2_and_says_what_to_do() {
    let fixture = Fixture::new();
    let output = fixture
        .lab
        .command(&["compare", "a", "b", "--db"])
        .arg(fixture.scratch("nowhere.db"))
        .output()
        .unwrap();
    let message = usage_error(&output);
    assert!(
        message.contains("nowhere.db") && message.contains("--db"),
        "{message}"
    );
}

#[test]
fn bad_flags_exit_2() {
    let fixture = Fixture::new();
    let run = fixture.run_a.as_str();
    for args in [
        vec!["report", run, "--alpha", "2"],
        vec!["report", run, "--confidence", "0"],
        vec!["report", run, "--format", "pdf"],
        vec!["compare", run, run, "--format", "html"],
    ] {
        usage_error(&fixture.corobench(&args));
    }
}

#[test]
fn output_goes_to_a_file_when_asked() {
    let fixture = Fixture::new();
    let path = fixture.scratch("report.html");
    let path_text = path.to_str().unwrap();
    let output = fixture.corobench(&["report", &fixture.run_a, "-f", "html", "-o", path_text]);
    assert!(ok(&output).is_empty());
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    let missing = fixture.scratch("no/such/dir/report.md");
    let message = usage_error(&fixture.corobench(&["report", "-o", missing.to_str().unwrap()]));
    assert!(message.contains("cannot create -o"), "{message}");
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let fixture = Fixture::new();
    let piped = ok(&fixture.corobench(&["report", &fixture.run_a]));
    assert!(!piped.contains('\x1b'));
    let forced = ok(&fixture.corobench(&["report", &fixture.run_a, "--color", "always"]));
    assert!(forced.contains("\x1b[31m") || forced.contains("\x1b[32m"));
}

#[test]
fn a_comparison_lists_the_scenarios_only_one_run_has() {
    let fixture = Fixture::new();
    let table = ok(&fixture.corobench(&["compare", &fixture.run_a, &fixture.run_b]));
    assert!(
        table.contains("only in A (not compared): go-nethttp/io-5ms/c=32"),
        "{table}"
    );
    assert!(
        table.contains("only in B (not compared): go-nethttp/json-open/rate=3000/c=16"),
        "{table}"
    );
    assert!(table.contains("geomean"), "{table}");
    assert!(table.contains("load backend epoll vs io_uring"), "{table}");
    let output = fixture.corobench(&["compare", &fixture.run_a, &fixture.run_b]);
    assert!(stdout(&output).starts_with("corobench compare"));
}
