//! Finding a run from what a user typed: `latest`, an id, or a prefix.

use super::fixtures::{run, scenarios, temp_store};
use crate::{LATEST, Store, StoreError};

fn store_with_runs(ids: &[(&str, i64)]) -> (tempfile::TempDir, Store) {
    let (dir, mut store) = temp_store();
    for (id, started) in ids {
        store
            .create_run(&run(id, *started), 1, &scenarios())
            .unwrap();
    }
    (dir, store)
}

const RUNS: [(&str, i64); 3] = [
    ("20261122-063301-3f9a", 1_000),
    ("20261122-071500-77b0", 2_000),
    ("20261123-090000-a1c2", 3_000),
];

#[test]
fn latest_is_the_newest_run() {
    let (_dir, store) = store_with_runs(&RUNS);
    assert_eq!(
        store.resolve_run_id(LATEST).unwrap(),
        "20261123-090000-a1c2"
    );
}

#[test]
fn a_full_id_or_a_unique_prefix_names_a_run() {
    let (_dir, store) = store_with_runs(&RUNS);
    assert_eq!(
        store.resolve_run_id("20261122-071500-77b0").unwrap(),
        "20261122-071500-77b0"
    );
    assert_eq!(
        store.resolve_run_id("20261123").unwrap(),
        "20261123-090000-a1c2"
    );
    assert_eq!(
        store.resolve_run_id("20261122-06").unwrap(),
        "20261122-063301-3f9a"
    );
}

#[test]
fn an_id_that_is_also_a_prefix_of_another_is_exact() {
    let (_dir, store) = store_with_runs(&[("run-1", 1), ("run-10", 2)]);
    assert_eq!(store.resolve_run_id("run-1").unwrap(), "run-1");
}

#[test]
fn an_ambiguous_prefix_lists_the_candidates() {
    let (_dir, store) = store_with_runs(&RUNS);
    let error = store.resolve_run_id("20261122").unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, StoreError::AmbiguousRun { .. }),
        "{message}"
    );
    assert!(message.contains("20261122-063301-3f9a"), "{message}");
    assert!(message.contains("20261122-071500-77b0"), "{message}");
    assert!(!message.contains("20261123"), "{message}");
}

#[test]
fn an_unknown_id_lists_recent_runs() {
    let (_dir, store) = store_with_runs(&RUNS);
    for typed in ["2027", "", "%", "_0261122"] {
        let error = store.resolve_run_id(typed).unwrap_err();
        let message = error.to_string();
        assert!(
            matches!(error, StoreError::UnknownRun { .. }),
            "{typed:?}: {message}"
        );
        assert!(message.contains("20261123-090000-a1c2"), "{message}");
    }
}

#[test]
fn an_empty_store_has_no_latest_run() {
    let (_dir, store) = temp_store();
    let error = store.resolve_run_id(LATEST).unwrap_err();
    assert!(matches!(error, StoreError::NoRuns { .. }), "{error}");
    let error = store.resolve_run_id("abc").unwrap_err();
    assert!(error.to_string().contains("holds no runs"), "{error}");
}
