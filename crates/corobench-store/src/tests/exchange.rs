//! Run files and imports: a run comes back exactly as it was stored, an
//! import stores a run once, and every bad input is refused before the
//! database changes.

use std::io::{Read as _, Write as _};
use std::path::Path;

use corobench_model::{
    IdleMeasurement, ProfileOutcome, ProfileRecord, ProgramMetric, ProgramResult, RunStatus,
    StoredRun,
};

use super::fixtures::{RUN_ID, failed_trial, ok_trial, run, scenarios, temp_store};
use crate::run_file::canonical;
use crate::{
    ImportOutcome, RunFileError, RunSource, Store, StoreError, read_run_file, runs_of_database,
    write_run_file,
};

/// A run with every part a run file carries: load trials open and
/// closed, a failed trial, an idle trial, a program trial, a resource mean
/// without samples (NaN), and a captured and a skipped profile.
fn every_shape(id: &str) -> StoredRun {
    let mut record = run(id, 1_763_793_181_000);
    record.status = RunStatus::Complete;
    record.finished_at_unix_ms = Some(1_763_793_999_000);
    let mut unsampled = ok_trial(0, 2, 3);
    if let Some(resources) = unsampled.resources.as_mut() {
        resources.cpu_pct_mean = f64::NAN;
    }
    let mut idle = corobench_model::TrialRecord::started(1, 2, 4, 1_763_793_300_000);
    idle.idle = Some(IdleMeasurement {
        connections: 1000,
        rss_bytes: 41 << 20,
        settled: true,
        waited_s: 1.25,
    });
    let mut program = corobench_model::TrialRecord::started(1, 3, 5, 1_763_793_400_000);
    program.program = Some(ProgramResult {
        metrics: vec![ProgramMetric {
            unit: "tasks/s".to_owned(),
            value: 2170.5,
        }],
        lines: vec!["BenchmarkPool-1 1 2170.5 tasks/s".to_owned()],
        elapsed_s: 3.5,
        resources: None,
    });
    let profile = |scenario_index, outcome| ProfileRecord {
        scenario_index,
        frequency_hz: 99,
        started_at_unix_ms: 1_763_793_500_000,
        outcome,
    };
    StoredRun {
        run: record,
        trials_per_scenario: 4,
        scenarios: scenarios(),
        trials: vec![
            ok_trial(1, 0, 0),
            ok_trial(0, 0, 1),
            failed_trial(0, 1, 2),
            unsampled,
            idle,
            program,
        ],
        profiles: vec![
            profile(
                0,
                ProfileOutcome::Captured {
                    samples: 3,
                    folded_stacks: "server;main;write 2\nserver;main 1\n".to_owned(),
                },
            ),
            profile(
                1,
                ProfileOutcome::Skipped {
                    reason: "perf is not installed".to_owned(),
                },
            ),
        ],
    }
}

fn stored(store: &mut Store, run: &StoredRun) {
    store.import_runs(std::slice::from_ref(run)).unwrap();
}

fn form(run: &StoredRun) -> Vec<u8> {
    canonical(run).unwrap()
}

#[test]
fn a_run_file_brings_back_every_part_exactly() {
    let (dir, mut source) = temp_store();
    let original = every_shape(RUN_ID);
    stored(&mut source, &original);
    let loaded = source.run_to_export(RUN_ID).unwrap();
    assert_eq!(form(&loaded), form(&original));
    let file = dir.path().join("run.json.gz");
    write_run_file(&file, &[loaded]).unwrap();
    assert_eq!(RunSource::of(&file).unwrap(), RunSource::RunFile);

    let back = read_run_file(&file).unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(form(&back[0]), form(&original));
    assert!(back[0].trials[3].resources.unwrap().cpu_pct_mean.is_nan());
    assert_eq!(back[0].profiles, original.profiles, "stacks included");

    let mut target = Store::open(dir.path().join("other.db")).unwrap();
    stored(&mut target, &back[0]);
    let again = target.run_to_export(RUN_ID).unwrap();
    assert_eq!(form(&again), form(&original));
    // Exporting the imported run writes the same bytes.
    let second = dir.path().join("again.json.gz");
    write_run_file(&second, &[again]).unwrap();
    assert_eq!(
        std::fs::read(&file).unwrap(),
        std::fs::read(&second).unwrap()
    );
}

#[test]
fn histograms_travel_compressed() {
    let (dir, _store) = temp_store();
    let file = dir.path().join("run.json.gz");
    write_run_file(&file, &[every_shape(RUN_ID)]).unwrap();
    let json = inflate(&file);
    let compact = ok_trial(1, 0, 0).load.unwrap().latency.histogram;
    assert!(json.contains(&compact.to_compact_base64()));
    assert!(!json.contains(&compact.to_base64()));
}

#[test]
fn importing_twice_stores_one_run() {
    let (_dir, mut store) = temp_store();
    let run = every_shape(RUN_ID);
    let first = store.import_runs(&[run.clone(), run.clone()]).unwrap();
    let outcomes: Vec<ImportOutcome> = first.iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [ImportOutcome::Added, ImportOutcome::AlreadyStored]
    );
    let second = store.import_runs(&[run]).unwrap();
    assert_eq!(second[0].outcome, ImportOutcome::AlreadyStored);
    assert_eq!(store.runs().unwrap().len(), 1);
}

#[test]
fn another_run_under_a_stored_id_is_refused_and_nothing_is_stored() {
    let (_dir, mut store) = temp_store();
    let original = every_shape(RUN_ID);
    stored(&mut store, &original);
    let mut impostor = every_shape(RUN_ID);
    impostor.trials.pop();
    let newcomer = every_shape("20261127-124609-f82d");
    let error = store.import_runs(&[newcomer, impostor]).unwrap_err();
    assert!(matches!(error, StoreError::RunDiffers { .. }), "{error}");
    let text = error.to_string();
    assert!(
        text.contains("stored: complete, 6 trials (1 failed)"),
        "{text}"
    );
    assert!(
        text.contains("imported: complete, 5 trials (1 failed)"),
        "{text}"
    );
    let ids: Vec<String> = store.runs().unwrap().into_iter().map(|l| l.id).collect();
    assert_eq!(ids, [RUN_ID]);
    assert_eq!(form(&store.load_run(RUN_ID).unwrap()), form(&original));
}

#[test]
fn a_run_still_running_is_neither_exported_nor_imported() {
    let (_dir, mut store) = temp_store();
    let mut running = every_shape(RUN_ID);
    running.run.status = RunStatus::Running;
    let error = store.import_runs(&[running.clone()]).unwrap_err();
    assert!(matches!(error, StoreError::StillRunning { .. }), "{error}");
    store
        .create_run(&running.run, 4, &running.scenarios)
        .unwrap();
    let error = store.run_to_export(RUN_ID).unwrap_err();
    assert!(error.to_string().contains("is still running"), "{error}");
}

/// The JSON inside a run file.
fn inflate(path: &Path) -> String {
    let mut json = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut json)
        .unwrap();
    json
}

/// A gzip file holding `json`.
fn deflate(path: &Path, json: &str) {
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(json.as_bytes()).unwrap();
    std::fs::write(path, gzip.finish().unwrap()).unwrap();
}

fn read_error(path: &Path) -> RunFileError {
    read_run_file(path).unwrap_err()
}

#[test]
fn files_that_are_not_run_files_are_refused_saying_why() {
    let (dir, _store) = temp_store();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a run").unwrap();
    assert!(matches!(
        RunSource::of(&text),
        Err(RunFileError::NotARunFile { .. })
    ));
    assert!(
        read_error(&text)
            .to_string()
            .contains("not gzip-compressed")
    );
    let other = dir.path().join("other.json.gz");
    deflate(&other, r#"{"format": "something-else", "version": 1}"#);
    let error = read_error(&other);
    assert!(
        error.to_string().contains("holds no corobench runs"),
        "{error}"
    );
    let empty = dir.path().join("empty.json.gz");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(
        read_error(&empty),
        RunFileError::NotARunFile { .. }
    ));
}

#[test]
fn a_truncated_file_says_so() {
    let (dir, _store) = temp_store();
    let file = dir.path().join("run.json.gz");
    write_run_file(&file, &[every_shape(RUN_ID)]).unwrap();
    let bytes = std::fs::read(&file).unwrap();
    for cut in [bytes.len() / 2, bytes.len() - 3] {
        std::fs::write(&file, &bytes[..cut]).unwrap();
        let error = read_error(&file);
        assert!(
            matches!(error, RunFileError::Truncated { .. }),
            "{cut}: {error}"
        );
    }
}

#[test]
fn a_newer_file_is_refused_before_its_runs_are_read() {
    let (dir, _store) = temp_store();
    let file = dir.path().join("future.json.gz");
    deflate(
        &file,
        r#"{"format": "corobench-runs", "version": 2, "runs": "in another shape"}"#,
    );
    let error = read_error(&file);
    assert!(
        matches!(
            error,
            RunFileError::NewerVersion {
                found: 2,
                known: 1,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("upgrade corobench"), "{error}");
}

#[test]
fn a_corrupt_histogram_names_its_run_and_trial() {
    let (dir, _store) = temp_store();
    let file = dir.path().join("run.json.gz");
    write_run_file(&file, &[every_shape(RUN_ID)]).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&inflate(&file)).unwrap();
    json["runs"][0]["trials"][1]["load"]["latency"]["hdr_v2_base64"] =
        serde_json::Value::String("SElTVEZBQUFB".to_owned());
    deflate(&file, &json.to_string());
    let error = read_error(&file);
    let text = error.to_string();
    assert!(matches!(error, RunFileError::Damaged { .. }), "{text}");
    assert!(
        text.contains(&format!("run {RUN_ID}: trial 0 of scenario 0")),
        "{text}"
    );
    assert!(text.contains("invalid HDR histogram"), "{text}");
}

#[test]
fn a_trial_of_no_scenario_is_refused() {
    let (dir, _store) = temp_store();
    let file = dir.path().join("run.json.gz");
    let mut run = every_shape(RUN_ID);
    run.trials[0].scenario_index = 7;
    write_run_file(&file, &[run]).unwrap();
    let error = read_error(&file).to_string();
    assert!(error.contains("trial 0 of scenario 7"), "{error}");
    assert!(error.contains("no such scenario"), "{error}");
}

#[test]
fn a_database_is_read_from_a_copy_and_left_as_it_was() {
    let (dir, mut store) = temp_store();
    stored(&mut store, &every_shape(RUN_ID));
    let mut running = every_shape("20261127-124609-f82d");
    running.run.status = RunStatus::Running;
    store
        .create_run(&running.run, 4, &running.scenarios)
        .unwrap();
    drop(store);
    let path = dir.path().join("results.db");
    let before = std::fs::read(&path).unwrap();
    assert_eq!(RunSource::of(&path).unwrap(), RunSource::Database);
    let found = runs_of_database(&path).unwrap();
    assert_eq!(found.running, ["20261127-124609-f82d"]);
    assert_eq!(found.ended.len(), 1);
    assert_eq!(form(&found.ended[0]), form(&every_shape(RUN_ID)));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let missing = runs_of_database(&dir.path().join("nope.db")).unwrap_err();
    assert!(missing.to_string().contains("nope.db"), "{missing}");
}
