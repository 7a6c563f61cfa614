//! The machine-speed probe in the reports: a copy of fixture run A stored
//! with a probe on every trial (the machine 20% slower in every other
//! trial), reported in every format, with and without normalising.

mod lab;

use corobench_model::{MachineProbe, StoredRun};
use corobench_store::Store;
use lab::{Fixture, ok, repo_path, usage_error};

/// The id of run A's probed copy.
const PROBED: &str = "20990101-000000-abcd";

/// Stores run A again as `PROBED`, each trial with a probe; odd sequences
/// ran on a machine 20% slower.
fn store_probed(fixture: &Fixture) -> StoredRun {
    let mut store = Store::open(&fixture.db).unwrap();
    let mut run = store.load_run(&fixture.run_a).unwrap();
    run.run.id = PROBED.to_owned();
    store
        .create_run(&run.run, run.trials_per_scenario, &run.scenarios)
        .unwrap();
    for trial in &mut run.trials {
        let speed = if trial.sequence % 2 == 0 { 1.0 } else { 0.8 };
        trial.probe = Some(MachineProbe {
            server_mb_per_s: 500.0 * speed,
            generator_mb_per_s: 600.0 * speed,
        });
        store.record_trial(PROBED, trial).unwrap();
    }
    run
}

fn report(fixture: &Fixture, format: &str, extra: &[&str]) -> String {
    let mut args = vec!["report", PROBED, "--format", format, "--color", "never"];
    args.extend_from_slice(extra);
    ok(&fixture.corobench(&args))
}

#[test]
fn every_format_states_how_much_the_machine_varied() {
    let fixture = Fixture::new();
    let stored = store_probed(&fixture);
    assert_eq!(
        Store::open_existing(&fixture.db)
            .unwrap()
            .load_run(PROBED)
            .unwrap(),
        stored,
        "the probes are stored with the trials"
    );
    let said = "the machine-speed probe (a fixed SHA-256 job before each of";
    for format in ["table", "md", "html"] {
        // The table wraps its notes: words are compared, not line breaks.
        let text = report(&fixture, format, &[])
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(text.contains(said), "{format}: {text}");
        assert!(text.contains("±11.1% of its median"), "{format}: {text}");
    }
    let json: serde_json::Value = serde_json::from_str(&report(&fixture, "json", &[])).unwrap();
    assert_eq!(
        json["machine"]["server"]["half_range"].as_f64(),
        Some(1.0 / 9.0)
    );
    assert_eq!(json["machine"]["source"], "machine");
    let trial = &json["scenarios"][0]["trials"][0];
    let odd = trial["sequence"].as_u64().unwrap() % 2 == 1;
    let expected = if odd { 480.0 } else { 600.0 };
    assert_eq!(
        trial["probe"]["generator_mb_per_s"].as_f64(),
        Some(expected)
    );
    let csv = report(&fixture, "csv", &[]);
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .ends_with(",machine_variation,within_machine_variation")
    );
    assert!(lines.all(|l| l.contains(",0.1111111111111111,")), "{csv}");
    let trials = report(&fixture, "csv-trials", &[]);
    let mut lines = trials.lines();
    assert!(
        lines.next().unwrap().ends_with(
            ",value,probe_server_mb_per_s,probe_generator_mb_per_s,already_running,flags"
        )
    );
    assert!(
        lines.all(|l| l.contains(",500,600,false,") || l.contains(",400,480,false,")),
        "{trials}"
    );
    assert!(
        report(&fixture, "gobench", &[]).contains("\n# machine speed: the machine-speed probe")
    );
}

#[test]
fn comparisons_within_the_machines_variation_are_marked() {
    let fixture = Fixture::new();
    store_probed(&fixture);
    let json: serde_json::Value = serde_json::from_str(&report(&fixture, "json", &[])).unwrap();
    let warnings = json["warnings"].as_array().unwrap();
    let within = warnings
        .iter()
        .position(|w| w["kind"] == "within_machine_variation")
        .expect("some comparison of run A lies within ±11%");
    let marked: Vec<&serde_json::Value> = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["warnings"].as_array().unwrap().contains(&within.into()))
        .collect();
    assert!(!marked.is_empty());
    for scenario in marked {
        let index = scenario["index"].as_u64().unwrap();
        let comparison = json["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| json["scenarios"][c["scenario"].as_u64().unwrap() as usize]["index"] == index)
            .expect("a marked scenario was compared");
        let ratio = comparison["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == "requests_per_s")
            .unwrap()["ratio"]
            .as_f64()
            .unwrap();
        assert!((ratio - 1.0).abs() <= 1.0 / 9.0, "{ratio}");
    }
    let csv = report(&fixture, "csv", &[]);
    assert!(csv.lines().any(|l| l.ends_with(",true")), "{csv}");
}

#[test]
fn normalising_is_an_option_the_report_records() {
    let fixture = Fixture::new();
    store_probed(&fixture);
    let plain: serde_json::Value = serde_json::from_str(&report(&fixture, "json", &[])).unwrap();
    let normalised: serde_json::Value =
        serde_json::from_str(&report(&fixture, "json", &["--normalise-by-probe"])).unwrap();
    assert!(plain["settings"].get("normalise_by_probe").is_none());
    assert_eq!(normalised["settings"]["normalise_by_probe"], true);
    assert_eq!(normalised["machine"]["normalised"], true);
    // A trial on the slow machine counts 500/400 times its measured req/s
    // (the median probe is 450: half the trials at 500, half at 400).
    let trial = |doc: &serde_json::Value| {
        doc["scenarios"][0]["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["sequence"].as_u64().unwrap() % 2 == 1)
            .unwrap()["values"]["requests_per_s"]
            .as_f64()
            .unwrap()
    };
    let scaled = trial(&normalised) / trial(&plain);
    assert!((scaled - 450.0 / 400.0).abs() < 1e-9, "{scaled}");
    // Latency is left as measured.
    assert_eq!(
        plain["scenarios"][0]["metrics"]["latency_p99_us"],
        normalised["scenarios"][0]["metrics"]["latency_p99_us"]
    );
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_path("docs/schema/report.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for document in [&plain, &normalised] {
        let errors: Vec<String> = validator
            .iter_errors(document)
            .take(5)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
}

#[test]
fn normalising_a_run_without_probes_is_refused() {
    let fixture = Fixture::new();
    let output = fixture.corobench(&["report", &fixture.run_a, "--normalise-by-probe"]);
    let message = usage_error(&output);
    assert!(
        message.contains(&format!(
            "--normalise-by-probe: run {} has no machine-speed probe",
            fixture.run_a
        )) && message.contains("without the flag"),
        "{message}"
    );
}
