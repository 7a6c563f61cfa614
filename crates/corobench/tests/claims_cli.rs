//! `corobench claims` and `corobench pages` as a user runs them, on the
//! fixture runs and copies of them measured "elsewhere": each machine
//! kind's newest complete run judged on its own, one line per claim across
//! the kinds, and the pages written from them.

mod lab;

use corobench_model::RunStatus;
use corobench_store::Store;
use lab::{Fixture, ok, plaintext_claim, repo_path, usage_error};

const INTEL_RUN: &str = "20261124-080000-1a1a";
const NEWER_AMD_RUN: &str = "20261124-090000-2b2b";

/// The fixture (two runs on an AMD EPYC, without claims) and, stating the
/// plaintext claim: run A again on an Intel Xeon, run B again on the AMD
/// EPYC (the newest run there), and an interrupted run on the Intel Xeon
/// that is newer still and must not count.
fn fixture_on_two_machines() -> Fixture {
    let fixture = Fixture::new();
    let mut store = Store::open_existing(&fixture.db).unwrap();
    let copies = [
        (&fixture.run_a, INTEL_RUN, true, RunStatus::Complete),
        (&fixture.run_b, NEWER_AMD_RUN, false, RunStatus::Complete),
        (
            &fixture.run_a,
            "20261125-000000-3c3c",
            true,
            RunStatus::Interrupted,
        ),
    ];
    for (day, (from, id, intel, status)) in copies.into_iter().enumerate() {
        let mut run = store.load_run(from).unwrap();
        run.run.id = id.to_owned();
        run.run.status = status;
        run.run.started_at_unix_ms += 86_400_000 * (day as i64 + 2);
        run.run.claims = vec![plaintext_claim()];
        if intel {
            run.run.provenance.cpu_model = "Intel(R) Xeon(R) Processor".to_owned();
            run.run.provenance.kernel = "6.18.44-fc-v657".to_owned();
        }
        store.import_runs(&[run]).unwrap();
    }
    fixture
}

#[test]
fn each_machine_kinds_newest_complete_run_is_judged() {
    let fixture = fixture_on_two_machines();
    let json = ok(&fixture.corobench(&["claims", "--format", "json"]));
    let evidence: corobench_model::ClaimsAcrossMachines = serde_json::from_str(&json).unwrap();
    let [suite] = evidence.suites.as_slice() else {
        panic!("one suite: {json}");
    };
    let runs: Vec<(&str, &str)> = suite
        .runs
        .iter()
        .map(|r| (r.machine.label.as_str(), r.run_id.as_str()))
        .collect();
    assert_eq!(
        runs,
        [
            ("AMD EPYC, 2 CPUs, Linux 6.18", NEWER_AMD_RUN),
            ("Intel Xeon Processor, 2 CPUs, Linux 6.18", INTEL_RUN)
        ]
    );
    let [claim] = suite.claims.as_slice() else {
        panic!("one claim: {json}");
    };
    assert_eq!(claim.stated, 2);
    assert!(
        claim.summary.contains("of 2 machine kinds"),
        "{}",
        claim.summary
    );
    // Each kind's verdict is the one its own report reaches.
    let report = ok(&fixture.corobench(&["report", INTEL_RUN, "--format", "json"]));
    let analysis: corobench_model::RunAnalysis = serde_json::from_str(&report).unwrap();
    assert_eq!(
        claim.verdicts[1].verdict.as_ref(),
        Some(&analysis.claims[0])
    );
    validates(&json);
}

/// The document matches docs/schema/report.schema.json's
/// `claims_across_machines`.
fn validates(json: &str) {
    let text = std::fs::read_to_string(repo_path("docs/schema/report.schema.json")).unwrap();
    let mut schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let root = schema.as_object_mut().unwrap();
    root.remove("oneOf");
    root.insert("$ref".into(), "#/$defs/claims_across_machines".into());
    let validator = jsonschema::validator_for(&schema).unwrap();
    let document: serde_json::Value = serde_json::from_str(json).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&document)
        .take(5)
        .map(|e| format!("{:?} at {}", e.kind(), e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn the_table_and_markdown_name_every_kind() {
    let fixture = fixture_on_two_machines();
    for format in ["table", "md"] {
        let text = ok(&fixture.corobench(&["claims", "--format", format]));
        assert!(
            text.contains("Go net/http serves 1.3x Node.js on plaintext"),
            "{text}"
        );
        assert!(text.contains("AMD EPYC, 2 CPUs, Linux 6.18"), "{text}");
        assert!(
            text.contains("Intel Xeon Processor, 2 CPUs, Linux 6.18"),
            "{text}"
        );
        assert!(text.contains("machine kinds"), "{text}");
    }
}

#[test]
fn a_suite_without_a_complete_run_is_a_usage_error() {
    let fixture = fixture_on_two_machines();
    let error = usage_error(&fixture.corobench(&["claims", "--suite", "nope"]));
    assert!(error.contains("--suite nope"), "{error}");
    assert!(error.contains("suites with one: report-fixture"), "{error}");
}

#[test]
fn pages_are_written_per_suite_and_machine_kind_and_again_the_same() {
    let fixture = fixture_on_two_machines();
    let dir = fixture.scratch("pages");
    let table = fixture.scratch("runs.md");
    let args = |dir: &std::path::Path, table: &std::path::Path| {
        vec![
            "pages".to_owned(),
            "report-fixture".to_owned(),
            "capacity-json".to_owned(),
            "-o".to_owned(),
            dir.display().to_string(),
            "--runs-table".to_owned(),
            table.display().to_string(),
        ]
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(&fixture.corobench(&args))
    };
    run(args(&dir, &table));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "README.md",
            "report-fixture.amd-epyc-2-cpus-linux-6.18.html",
            "report-fixture.intel-xeon-processor-2-cpus-linux-6.18.html",
            "report-fixture.md"
        ]
    );
    let page = std::fs::read_to_string(dir.join("report-fixture.md")).unwrap();
    let across = page
        .find("## Published claims across machine kinds")
        .unwrap();
    let amd = page.find("## AMD EPYC, 2 CPUs, Linux 6.18").unwrap();
    let intel = page
        .find("## Intel Xeon Processor, 2 CPUs, Linux 6.18")
        .unwrap();
    assert!(across < amd && amd < intel, "{page}");
    let runs = std::fs::read_to_string(&table).unwrap();
    assert!(
        runs.contains("capacity-json: no run on any machine kind"),
        "{runs}"
    );
    // The same runs give the same pages, byte for byte.
    let again = fixture.scratch("again");
    run(args(&again, &fixture.scratch("again.md")));
    for name in &names {
        let a = std::fs::read(dir.join(name)).unwrap();
        let b = std::fs::read(again.join(name)).unwrap();
        assert!(a == b, "{name} differs between two writes");
    }
}
