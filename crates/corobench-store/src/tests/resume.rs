//! What `run --resume` relies on: stored trials are listed exactly, never
//! stored twice, and a full disk says how to go on.

use super::fixtures::{RUN_ID, failed_trial, ok_trial, store_with_run};
use crate::{Store, StoreError};

#[test]
fn completed_trials_lists_exactly_what_was_stored() {
    let (_dir, mut store) = store_with_run();
    assert!(store.completed_trials(RUN_ID).unwrap().is_empty());
    for (scenario, trial, sequence) in [(1, 2, 0), (0, 0, 1), (1, 0, 2)] {
        store
            .record_trial(RUN_ID, &ok_trial(scenario, trial, sequence))
            .unwrap();
    }
    store.record_trial(RUN_ID, &failed_trial(0, 2, 3)).unwrap();
    assert_eq!(
        store.completed_trials(RUN_ID).unwrap(),
        [(0, 0), (0, 2), (1, 0), (1, 2)]
    );
}

#[test]
fn a_recorded_trial_is_committed_when_the_call_returns() {
    let (dir, mut store) = store_with_run();
    store.record_trial(RUN_ID, &ok_trial(0, 1, 0)).unwrap();
    // Another process sees it while this store is still open.
    let reader = Store::open_existing(dir.path().join("results.db")).unwrap();
    assert_eq!(reader.completed_trials(RUN_ID).unwrap(), [(0, 1)]);
    store.record_trial(RUN_ID, &ok_trial(1, 1, 1)).unwrap();
    assert_eq!(reader.completed_trials(RUN_ID).unwrap(), [(0, 1), (1, 1)]);
}

#[test]
fn a_trial_is_never_stored_twice() {
    let (_dir, mut store) = store_with_run();
    store.record_trial(RUN_ID, &ok_trial(1, 0, 0)).unwrap();
    // Same scenario and trial, even with another outcome and sequence.
    let error = store
        .record_trial(RUN_ID, &failed_trial(1, 0, 5))
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::TrialExists {
                scenario_index: 1,
                trial_index: 0,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("count it twice"), "{error}");
    assert_eq!(store.completed_trials(RUN_ID).unwrap(), [(1, 0)]);
    assert_eq!(store.load_run(RUN_ID).unwrap().trials, [ok_trial(1, 0, 0)]);
}

#[test]
fn trials_of_unknown_runs_or_scenarios_are_rejected() {
    let (_dir, mut store) = store_with_run();
    let error = store.record_trial(RUN_ID, &ok_trial(7, 0, 0)).unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::UnknownScenario {
                scenario_index: 7,
                ..
            }
        ),
        "{error}"
    );
    let error = store
        .record_trial("20990101-000000-dead", &ok_trial(0, 0, 0))
        .unwrap_err();
    assert!(matches!(error, StoreError::UnknownRun { .. }), "{error}");
    assert!(
        error.to_string().contains(RUN_ID),
        "suggests known runs: {error}"
    );
    let error = store.completed_trials("missing").unwrap_err();
    assert!(matches!(error, StoreError::UnknownRun { .. }), "{error}");
}

#[test]
fn a_full_disk_names_the_file_and_how_to_resume() {
    let (_dir, mut store) = store_with_run();
    store.record_trial(RUN_ID, &ok_trial(0, 0, 0)).unwrap();
    // Let the file grow no further than it is: the next trial does not fit.
    let pages: i64 = store
        .conn
        .query_row("PRAGMA page_count", [], |row| row.get(0))
        .unwrap();
    store
        .conn
        .pragma_update(None, "max_page_count", pages)
        .unwrap();
    let error = store.record_trial(RUN_ID, &ok_trial(1, 0, 1)).unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, StoreError::DiskFull { .. }), "{message}");
    assert!(message.contains("results.db"), "{message}");
    assert!(message.contains("is full"), "{message}");
    assert!(message.contains("resume the run"), "{message}");
    assert!(
        matches!(&error, StoreError::DiskFull { run_id: Some(id), .. } if id == RUN_ID),
        "{error:?}"
    );
    // The failed trial left nothing behind; the stored one is intact.
    assert_eq!(store.completed_trials(RUN_ID).unwrap(), [(0, 0)]);
}

#[test]
fn a_run_an_error_ended_is_listed_with_the_error_until_it_resumes() {
    use corobench_model::{RunProcess, RunStatus};
    let (_dir, mut store) = store_with_run();
    let process = RunProcess { pid: 1, started: 1 };
    store.set_run_process(RUN_ID, Some(process)).unwrap();
    let reason = "storing a trial: results.db is locked by another process";
    store
        .end_run(RUN_ID, RunStatus::Interrupted, None, Some(reason))
        .unwrap();
    let listed = &store.runs().unwrap()[0];
    assert_eq!(
        (listed.status, listed.reason.as_deref(), listed.process),
        (RunStatus::Interrupted, Some(reason), None)
    );
    // Resumed, it runs again, and the old reason is no longer its own.
    store
        .set_run_status(RUN_ID, RunStatus::Running, None)
        .unwrap();
    assert_eq!(store.runs().unwrap()[0].reason, None);
}
