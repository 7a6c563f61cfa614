//! Opening files: fresh, current, newer than known, or not ours at all.

use std::path::Path;

use corobench_model::{PoolCounters, PoolWindow};
use rusqlite::Connection;

use super::fixtures::{RUN_ID, ok_trial, store_with_run, temp_store};
use crate::{SCHEMA_VERSION, Store, StoreError};

#[test]
fn a_fresh_database_gets_the_current_schema() {
    let (_dir, store) = temp_store();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let mode: String = store
        .conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let foreign_keys: bool = store
        .conn
        .query_row("PRAGMA foreign_keys", [], |row| row.get(0))
        .unwrap();
    assert!(foreign_keys);
}

#[test]
fn reopening_is_idempotent_and_keeps_the_data() {
    let (dir, store) = store_with_run();
    drop(store);
    let path = dir.path().join("results.db");
    for _ in 0..3 {
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(store.runs().unwrap().len(), 1);
        assert_eq!(store.load_run(RUN_ID).unwrap().scenarios.len(), 2);
    }
}

#[test]
fn a_newer_schema_is_refused_with_a_clear_message() {
    let (dir, store) = temp_store();
    drop(store);
    let path = dir.path().join("results.db");
    let future = SCHEMA_VERSION + 1;
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", future)
        .unwrap();
    for result in [Store::open(&path), Store::open_existing(&path)] {
        let error = result.unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "{} was written by a newer corobench (schema {future}; this one knows schema \
                 {SCHEMA_VERSION} at most); upgrade corobench",
                path.display()
            )
        );
    }
    // Refusing did not touch the file.
    let version: i64 = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, future);
}

#[test]
fn a_missing_file_is_not_created_by_readers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nowhere.db");
    let error = Store::open_existing(&path).unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, StoreError::Missing { .. }), "{message}");
    assert!(message.contains("nowhere.db"), "{message}");
    assert!(!path.exists());
}

/// Issue "hostile input, third round", left behind 4: `--db
/// /nonexistent/dir/x.db` silently created the folders.
#[test]
fn a_database_in_a_missing_folder_is_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results/nested/corobench.db");
    let error = Store::open(&path).unwrap_err();
    assert!(matches!(error, StoreError::CannotOpen { .. }), "{error}");
    assert!(error.to_string().contains("does not exist"), "{error}");
    assert!(!dir.path().join("results").exists());
    let fresh = dir.path().join("corobench.db");
    Store::open(&fresh).unwrap();
    assert!(fresh.is_file(), "a new file in an existing folder is made");
}

/// Issue "hostile input, third round", left behind 4: `--db /dev/null`
/// left a `/dev/null-journal`. A device, a folder or a pipe is refused.
#[test]
fn a_path_that_is_no_regular_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for path in [Path::new("/dev/null"), dir.path()] {
        let error = Store::open(path).unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_file_that_is_not_sqlite_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    std::fs::write(&path, "these are my notes, not a database\n".repeat(200)).unwrap();
    let error = Store::open(&path).unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, StoreError::Corrupt { .. }), "{message}");
    assert!(message.contains("notes.db"), "{message}");
}

#[test]
fn another_programs_database_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE todo (item TEXT)")
        .unwrap();
    let error = Store::open(&path).unwrap_err();
    assert!(matches!(error, StoreError::Foreign { .. }), "{error}");
    let tables: i64 = Connection::open(&path)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM sqlite_schema", [], |row| row.get(0))
        .unwrap();
    assert_eq!(tables, 1, "no corobench table was added");
}

/// A database written by the first schema: a run with its scenarios and a
/// trial, as that corobench stored them.
fn schema_1_database(path: &std::path::Path) {
    let (dir, mut store) = store_with_run();
    store.record_trial(RUN_ID, &ok_trial(0, 0, 0)).unwrap();
    drop(store);
    std::fs::copy(dir.path().join("results.db"), path).unwrap();
    let conn = Connection::open(path).unwrap();
    // Back to schema 1: the columns and the status constraint it had.
    conn.execute_batch(
        "PRAGMA foreign_keys = OFF;
         CREATE TABLE runs_v1 AS SELECT id, started_at_unix_ms, finished_at_unix_ms, status, \
           suite, spec_toml, seed, trials_per_scenario, provenance_json FROM runs;
         DROP TABLE runs;
         ALTER TABLE runs_v1 RENAME TO runs;
         DROP TABLE program_metrics;
         DROP TABLE profiles;
         DROP TABLE idle_trials;
         ALTER TABLE scenarios DROP COLUMN idle;
         ALTER TABLE scenarios DROP COLUMN protocol;
         ALTER TABLE scenarios DROP COLUMN streams;
         ALTER TABLE scenarios DROP COLUMN tls_resume;
         ALTER TABLE scenarios DROP COLUMN background_path;
         ALTER TABLE scenarios DROP COLUMN background_streams;
         ALTER TABLE scenarios DROP COLUMN program_json;
         ALTER TABLE scenarios DROP COLUMN keepalive;
         ALTER TABLE scenarios DROP COLUMN pipeline;
         ALTER TABLE trials DROP COLUMN program_json;
         ALTER TABLE trials DROP COLUMN connect_latency_hdr;
         ALTER TABLE trials DROP COLUMN counters_json;
         ALTER TABLE trials DROP COLUMN probe_json;
         ALTER TABLE trials DROP COLUMN pool_json;
         PRAGMA user_version = 1;",
    )
    .unwrap();
}

/// A store with one trial, taken back to an older schema by `sql`, then
/// opened again (which migrates it).
fn reopened_after(sql: &str) -> (tempfile::TempDir, Store) {
    let (dir, mut store) = store_with_run();
    store.record_trial(RUN_ID, &ok_trial(0, 0, 0)).unwrap();
    drop(store);
    let path = dir.path().join("results.db");
    Connection::open(&path).unwrap().execute_batch(sql).unwrap();
    let store = Store::open(&path).unwrap();
    (dir, store)
}

#[test]
fn schema_7_gains_the_pool_column_and_keeps_its_trials_without_one() {
    let (_dir, mut store) = reopened_after(
        "ALTER TABLE trials DROP COLUMN pool_json;
         ALTER TABLE scenarios DROP COLUMN protocol;
         ALTER TABLE scenarios DROP COLUMN streams;
         ALTER TABLE scenarios DROP COLUMN tls_resume;
         ALTER TABLE scenarios DROP COLUMN background_path;
         ALTER TABLE scenarios DROP COLUMN background_streams;
         ALTER TABLE runs DROP COLUMN status_reason;
         PRAGMA user_version = 7;",
    );
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let run = store.load_run(RUN_ID).unwrap();
    assert_eq!(
        run.trials[0].pool, None,
        "a trial stored before schema 8 has no pool"
    );
    let mut pooled = ok_trial(0, 1, 1);
    let counted = |acquires| PoolCounters {
        max: Some(10),
        acquires: Some(acquires),
        new_connections: Some(10),
        empty_acquires: None,
        ..PoolCounters::default()
    };
    pooled.pool = Some(PoolWindow {
        before: PoolCounters::default(),
        after: counted(5_000),
    });
    store.record_trial(RUN_ID, &pooled).unwrap();
    let run = store.load_run(RUN_ID).unwrap();
    assert_eq!(run.trials[1].pool, pooled.pool);
}

#[test]
fn schema_6_gains_the_probe_column_and_keeps_its_trials_without_one() {
    let (_dir, mut store) = reopened_after(
        "ALTER TABLE trials DROP COLUMN probe_json;
         ALTER TABLE trials DROP COLUMN pool_json;
         ALTER TABLE scenarios DROP COLUMN protocol;
         ALTER TABLE scenarios DROP COLUMN streams;
         ALTER TABLE scenarios DROP COLUMN tls_resume;
         ALTER TABLE scenarios DROP COLUMN background_path;
         ALTER TABLE scenarios DROP COLUMN background_streams;
         ALTER TABLE runs DROP COLUMN status_reason;
         PRAGMA user_version = 6;",
    );
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let run = store.load_run(RUN_ID).unwrap();
    assert_eq!(run.trials.len(), 1);
    assert_eq!(
        run.trials[0].probe, None,
        "a trial stored before the probe has none"
    );
    let probed = ok_trial(0, 1, 1);
    store.record_trial(RUN_ID, &probed).unwrap();
    let run = store.load_run(RUN_ID).unwrap();
    assert_eq!(run.trials[1].probe, probed.probe);
    assert!(probed.probe.is_some());
}

#[test]
fn schema_1_is_migrated_keeping_every_run_scenario_and_trial() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    schema_1_database(&path);
    let before: i64 = Connection::open(&path)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM trials", [], |row| row.get(0))
        .unwrap();
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let run = store.load_run(RUN_ID).unwrap();
    assert_eq!(run.scenarios.len(), 2);
    assert!(
        run.scenarios
            .iter()
            .all(|s| s.wire == corobench_model::WireMode::default()),
        "scenarios stored before the wire mode was recorded were keep-alive, one at a time"
    );
    assert!(
        run.scenarios.iter().all(|s| s.protocol.is_http1()),
        "scenarios stored before the protocol was recorded spoke cleartext HTTP/1.1"
    );
    assert_eq!(run.trials.len() as i64, before);
    // Schema 1 stored no claims and no baseline: the run reports as before.
    assert!(run.run.claims.is_empty() && run.run.baseline.is_none());
    // Nor kernel counters: their metrics are absent, not zero.
    assert!(run.trials.iter().all(|t| t.counters.is_none()));
    assert!(before > 0, "the fixture has trials to keep");
    store
        .set_run_status(RUN_ID, corobench_model::RunStatus::Failed, Some(1))
        .unwrap();
    let process = corobench_model::RunProcess {
        pid: 42,
        started: 7,
    };
    store.set_run_process(RUN_ID, Some(process)).unwrap();
    assert_eq!(store.run_process(RUN_ID).unwrap(), Some(process));
    let listed = &store.runs().unwrap()[0];
    assert_eq!(listed.status, corobench_model::RunStatus::Failed);
    assert_eq!(listed.process, Some(process));
}

#[test]
fn a_read_never_writes_a_schema_into_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, b"").unwrap();
    let error = Store::open_existing(&path).unwrap_err();
    assert!(
        error.to_string().contains("holds no corobench schema"),
        "{error}"
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        0,
        "the file is left as it was"
    );
}
