//! A real throwaway PostgreSQL cluster: start, query, stop.

use std::path::Path;

use corobench_target::{Postgres, TargetError, group_members, install_child_reaper};

/// Starts a cluster, or returns `None` (printing why) when PostgreSQL is not
/// installed here.
fn start(work_root: &Path) -> Option<Postgres> {
    match Postgres::start(work_root) {
        Ok(postgres) => Some(postgres),
        Err(TargetError::Postgres { message }) if message.starts_with("not installed") => {
            println!("skipped: PostgreSQL is not installed ({message})");
            None
        }
        Err(error) => panic!("{error}"),
    }
}

#[test]
fn a_cluster_serves_the_world_table_and_stops_without_a_trace() {
    install_child_reaper().unwrap();
    let work_root = tempfile::tempdir().unwrap();
    let Some(postgres) = start(work_root.path()) else {
        return;
    };
    let port = postgres.port();
    assert_eq!(
        postgres.url(),
        format!("postgres://corobench@127.0.0.1:{port}/corobench")
    );

    let summary = postgres
        .psql("SELECT count(*), min(id), max(id), min(randomnumber) >= 1, max(randomnumber) <= 10000 FROM world")
        .unwrap();
    assert_eq!(summary, "10000|1|10000|t|t");
    let distinct = postgres
        .psql("SELECT count(DISTINCT randomnumber) > 1000 FROM world")
        .unwrap();
    assert_eq!(distinct, "t", "the numbers are random, not constant");
    let row = postgres
        .psql("SELECT id, randomnumber FROM world WHERE id = 42")
        .unwrap();
    assert!(row.starts_with("42|"), "{row}");
    let counters = postgres
        .psql("SELECT relname FROM pg_stat_user_tables WHERE relname = 'world'")
        .unwrap();
    assert_eq!(counters, "world", "the verifier reads these counters");

    let error = postgres.psql("SELEC 1").unwrap_err().to_string();
    assert!(error.contains("syntax error"), "{error}");

    let (postmaster, dir) = (postgres.pid().unwrap(), postgres.dir().to_path_buf());
    assert!(dir.join("data/PG_VERSION").exists());
    postgres.stop().unwrap();
    assert_eq!(group_members(postmaster), []);
    assert!(
        !Path::new(&format!("/proc/{postmaster}")).exists(),
        "the postmaster is reaped"
    );
    assert!(!dir.exists(), "the cluster is deleted");
}

#[test]
fn dropping_a_cluster_stops_it() {
    install_child_reaper().unwrap();
    let work_root = tempfile::tempdir().unwrap();
    let Some(postgres) = start(work_root.path()) else {
        return;
    };
    let (postmaster, dir) = (postgres.pid().unwrap(), postgres.dir().to_path_buf());
    drop(postgres);
    assert!(!Path::new(&format!("/proc/{postmaster}")).exists());
    assert!(!dir.exists());
}
