//! `idle_connections` end to end against a test-kit target: each trial
//! holds its idle connections on a fresh server and stores the settled
//! RSS; every report format shows the fitted bytes per connection. (The
//! slope's accuracy is checked against a known allocation in
//! memory_per_connection.rs.)

mod lab;

use corobench_store::Store;
use lab::{Lab, text};

fn idle_lab(extra: &str) -> Lab {
    let lab = Lab::new();
    lab.kit_target("kit");
    lab.write(
        "spec.toml",
        &format!(
            "name = \"idle\"\ntargets = [\"kit\"]\n[run]\ntrials = 2\n{extra}\
             [[workloads]]\nname = \"idle\"\npath = \"/plaintext\"\n\
             idle_connections = [20, 60]\n"
        ),
    );
    lab
}

#[test]
fn idle_trials_store_settled_rss_and_every_format_shows_bytes_per_connection() {
    // A profiled run: idle workloads send no load, so none is profiled.
    let lab = idle_lab("profile = true\n");
    let output = lab.run(&["run", lab.path("spec.toml").to_str().unwrap()]);
    assert!(output.status.success(), "stderr:\n{}", text(&output.stderr));
    let store = Store::open_existing(lab.db()).unwrap();
    let id = store.resolve_run_id("latest").unwrap();
    let run = store.load_run(&id).unwrap();
    assert_eq!(run.trials.len(), 4);
    assert!(run.profiles.is_empty(), "{:?}", run.profiles);
    for trial in &run.trials {
        let idle = trial.idle.expect("an idle measurement");
        let planned = run.scenarios[trial.scenario_index as usize].connections;
        assert_eq!(idle.connections, planned);
        assert!(idle.rss_bytes > 0 && trial.load.is_none());
    }
    let table = text(&lab.run(&["report"]).stdout);
    assert!(table.contains("memory per connection"), "{table}");
    assert!(table.contains("kit · idle: "), "{table}");
    assert!(table.contains("4 trials at 20, 60 connections"), "{table}");
    let csv = text(&lab.run(&["report", "--format", "csv-memory"]).stdout);
    let row: Vec<&str> = csv.lines().nth(1).expect("a row").split(',').collect();
    let keys: Vec<String> = run.scenarios.iter().map(|s| s.key.to_string()).collect();
    let keys = keys.join(" ");
    assert_eq!(
        &row[1..6],
        ["kit", "idle", keys.as_str(), "20 60", "4"],
        "{csv}"
    );
    assert!(row[6].parse::<f64>().is_ok(), "{csv}");
    let json = text(&lab.run(&["report", "--format", "json"]).stdout);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["memory_per_connection"][0]["trials"], 4);
    let gobench = text(&lab.run(&["report", "--format", "gobench"]).stdout);
    assert!(
        gobench.contains("BenchmarkMemoryPerConnection/workload=idle/target=kit 4 "),
        "{gobench}"
    );
    let html = text(&lab.run(&["report", "--format", "html"]).stdout);
    assert!(html.contains("Memory per connection"));
}

#[test]
fn idle_connections_over_tls_are_held_in_sessions_and_fitted_apart() {
    let lab = Lab::new();
    lab.kit_target_serving("kit", &["tls"]);
    lab.write(
        "spec.toml",
        "name = \"idle-tls\"\ntargets = [\"kit\"]\n[run]\ntrials = 2\n\
         [[workloads]]\nname = \"idle\"\npath = \"/plaintext\"\n\
         idle_connections = [20, 60]\ntls = [false, true]\n",
    );
    let output = lab.run(&["run", lab.path("spec.toml").to_str().unwrap(), "--no-probe"]);
    assert!(output.status.success(), "stderr:\n{}", text(&output.stderr));
    let store = Store::open_existing(lab.db()).unwrap();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    assert_eq!(run.trials.len(), 8);
    let over_tls = run.scenarios.iter().filter(|s| s.protocol.tls).count();
    assert_eq!(over_tls, 2, "{:?}", run.scenarios);
    for trial in &run.trials {
        let idle = trial.idle.expect("an idle measurement");
        assert!(idle.rss_bytes > 0, "{trial:?}");
    }
    let json = text(&lab.run(&["report", "--format", "json"]).stdout);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let fits = json["memory_per_connection"].as_array().unwrap();
    let labels: Vec<&str> = fits.iter().map(|f| f["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["kit", "kit tls=true"], "{json:#}");
    assert!(fits.iter().all(|f| f["trials"] == 4), "{fits:?}");
    let table = text(&lab.run(&["report"]).stdout);
    assert!(table.contains("kit tls=true · idle: "), "{table}");
}

#[test]
fn an_idle_workload_with_a_schedule_of_its_own_is_refused() {
    let lab = Lab::new();
    lab.kit_target("kit");
    lab.write(
        "spec.toml",
        "targets = [\"kit\"]\n[[workloads]]\nname = \"idle\"\npath = \"/plaintext\"\n\
         idle_connections = [20]\nconnections = 4\n",
    );
    let output = lab.run(&["run", lab.path("spec.toml").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(
            "an idle workload (idle_connections) sends no load, so it takes no connections"
        ),
        "{stderr}"
    );
}
