//! What goes in comes back out, and the headline columns say the same.

use corobench_model::RunStatus;

use super::fixtures::{
    RUN_ID, TRIALS_PER_SCENARIO, failed_trial, ok_trial, run, scenarios, store_with_run,
};
use corobench_model::StoredRun;

use crate::Store;

#[test]
fn a_run_with_all_kinds_of_trials_loads_back_equal() {
    let (dir, mut store) = store_with_run();
    let trials = vec![ok_trial(1, 0, 0), failed_trial(0, 0, 1), ok_trial(0, 1, 2)];
    for trial in &trials {
        store.record_trial(RUN_ID, trial).unwrap();
    }
    let expected = StoredRun {
        run: run(RUN_ID, 1_763_793_181_000),
        trials_per_scenario: TRIALS_PER_SCENARIO,
        scenarios: scenarios(),
        trials,
        profiles: Vec::new(),
    };
    assert_eq!(store.load_run(RUN_ID).unwrap(), expected);
    // The histograms came back bit for bit, not only their summaries.
    let loaded = store.load_run(RUN_ID).unwrap();
    let open_loop = loaded.trials[0].load.as_ref().unwrap();
    let original = expected.trials[0].load.as_ref().unwrap();
    assert_eq!(open_loop.latency.histogram.count(), 5000);
    assert_eq!(
        open_loop
            .latency_uncorrected
            .as_ref()
            .unwrap()
            .histogram
            .to_v2_bytes(),
        original
            .latency_uncorrected
            .as_ref()
            .unwrap()
            .histogram
            .to_v2_bytes()
    );
    drop(store);
    // A new connection (another corobench process) reads the same.
    let reopened = Store::open_existing(dir.path().join("results.db")).unwrap();
    assert_eq!(reopened.load_run(RUN_ID).unwrap(), expected);
}

#[test]
fn headline_figures_are_plain_columns() {
    let (_dir, mut store) = store_with_run();
    let trial = ok_trial(1, 0, 0);
    store.record_trial(RUN_ID, &trial).unwrap();
    let load = trial.load.as_ref().unwrap();
    let (p99, rps, bound, cpu, scenario): (u64, f64, bool, f64, String) = store
        .conn
        .query_row(
            "SELECT latency_p99_us, requests_per_s, generator_bound, server_cpu_pct_mean, \
             scenario FROM trial_results",
            [],
            |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            },
        )
        .unwrap();
    assert_eq!(Some(p99), load.latency.summary.percentile_us(99.0));
    assert!((rps - load.requests_per_s).abs() < f64::EPSILON);
    assert!(bound);
    assert!((cpu - 53.5).abs() < f64::EPSILON);
    assert_eq!(
        scenario,
        "go-nethttp/GOMAXPROCS=1/io-10ms/r=500/no-keepalive/tls"
    );
    // The JSON column does not repeat the histograms held in BLOBs; the
    // TLS handshake's, a few hundred bytes, is the one it keeps.
    let load_json: String = store
        .conn
        .query_row("SELECT load_json FROM trials", [], |row| row.get(0))
        .unwrap();
    assert_eq!(load_json.matches("hdr_v2_base64").count(), 1, "{load_json}");
    assert!(
        load_json.contains("\"handshake\":{\"count\""),
        "{load_json}"
    );
    assert!(!load_json.contains("timeline"), "{load_json}");
}

#[test]
fn runs_are_listed_newest_first_with_trial_counts() {
    let (_dir, mut store) = store_with_run();
    store.record_trial(RUN_ID, &ok_trial(0, 0, 0)).unwrap();
    store.record_trial(RUN_ID, &ok_trial(1, 0, 1)).unwrap();
    store.record_trial(RUN_ID, &failed_trial(0, 1, 2)).unwrap();
    store
        .set_run_status(RUN_ID, RunStatus::Interrupted, Some(1_763_793_999_000))
        .unwrap();
    store
        .create_run(
            &run("20261123-080000-0001", 1_763_880_000_000),
            1,
            &scenarios()[..1],
        )
        .unwrap();

    let listings = store.runs().unwrap();
    let ids: Vec<&str> = listings.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids, ["20261123-080000-0001", RUN_ID]);
    let first = &listings[1];
    assert_eq!(first.status, RunStatus::Interrupted);
    assert_eq!(first.finished_at_unix_ms, Some(1_763_793_999_000));
    assert_eq!((first.scenarios, first.trials_planned), (2, 6));
    assert_eq!((first.trials_ok, first.trials_failed), (2, 1));
    let second = &listings[0];
    assert_eq!((second.scenarios, second.trials_planned), (1, 1));
    assert_eq!((second.trials_ok, second.trials_failed), (0, 0));
    assert_eq!(second.status, RunStatus::Running);
}

#[test]
fn run_status_changes_are_stored() {
    let (_dir, mut store) = store_with_run();
    store
        .set_run_status(RUN_ID, RunStatus::Complete, Some(1_763_794_000_000))
        .unwrap();
    let run = store.load_run(RUN_ID).unwrap().run;
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.finished_at_unix_ms, Some(1_763_794_000_000));
    let error = store
        .set_run_status("nope", RunStatus::Complete, None)
        .unwrap_err();
    assert!(error.to_string().contains("no run `nope`"), "{error}");
}

#[test]
fn a_run_id_is_stored_once() {
    let (_dir, mut store) = store_with_run();
    let error = store
        .create_run(&run(RUN_ID, 1), 1, &scenarios())
        .unwrap_err();
    assert!(error.to_string().contains("already in"), "{error}");
}

#[test]
fn scenarios_with_the_same_key_are_rejected_and_nothing_is_stored() {
    let (_dir, mut store) = super::fixtures::temp_store();
    let mut twins = scenarios();
    twins[1].key = twins[0].key.clone();
    let error = store.create_run(&run("twins", 1), 1, &twins).unwrap_err();
    assert!(
        error.to_string().contains("repeats the index or key"),
        "{error}"
    );
    // The run insert was rolled back with the scenario.
    assert!(store.runs().unwrap().is_empty());
}

#[test]
fn a_program_scenario_and_its_figures_load_back_and_answer_sql() {
    use corobench_model::{ProgramMetric, ProgramResult, ProgramScenario, ServerChoice};
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("results.db")).unwrap();
    let mut program_scenarios = scenarios();
    program_scenarios[1].program = Some(ProgramScenario {
        server: Some(ServerChoice {
            target: "go-nethttp".to_owned(),
            parameters: [("gomaxprocs".to_owned(), "1".to_owned())].into(),
        }),
    });
    store
        .create_run(&run(RUN_ID, 1), TRIALS_PER_SCENARIO, &program_scenarios)
        .unwrap();
    let mut trial = failed_trial(1, 0, 0);
    trial.status = corobench_model::TrialStatus::Ok;
    trial.failure = None;
    trial.program = Some(ProgramResult {
        metrics: vec![
            ProgramMetric {
                unit: "req/s".to_owned(),
                value: 48_900.0,
            },
            ProgramMetric {
                unit: "B/op".to_owned(),
                value: 412.0,
            },
        ],
        lines: vec!["BenchmarkFanout-1 1 100 ns/op 48900 req/s 412 B/op".to_owned()],
        elapsed_s: 0.2,
        resources: None,
    });
    store.record_trial(RUN_ID, &trial).unwrap();
    let loaded = store.load_run(RUN_ID).unwrap();
    assert_eq!(loaded.scenarios, program_scenarios);
    assert_eq!(loaded.trials, vec![trial]);
    let bytes: f64 = store
        .conn
        .query_row(
            "SELECT value FROM program_metrics WHERE unit = 'B/op' AND trial_idx = 0",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(bytes, 412.0);
}

#[test]
fn a_background_request_loads_back_with_its_scenario() {
    let (_dir, mut store) = super::fixtures::temp_store();
    let mut list = scenarios();
    list[0].protocol = corobench_model::Protocol::H2C;
    list[0].wire.pipeline = 1;
    list[0].wire.streams = 10;
    list[0].workload.background = Some(corobench_model::BackgroundRecord {
        path: "/io?ms=200".to_owned(),
        streams: 2,
    });
    store
        .create_run(&run(RUN_ID, 1_763_793_181_000), TRIALS_PER_SCENARIO, &list)
        .unwrap();
    let loaded = store.load_run(RUN_ID).unwrap();
    assert_eq!(loaded.scenarios, list);
    assert_eq!(loaded.scenarios[1].workload.background, None);
}
