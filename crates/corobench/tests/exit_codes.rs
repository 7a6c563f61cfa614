//! The exit-code table of the README, checked on the inputs every command
//! shares: a damaged database, an empty one, and one that is missing.

mod lab;

use std::path::Path;
use std::process::Output;

use lab::Lab;

fn corobench(args: &[&str], db: &Path, lab: &Lab) -> Output {
    lab.command(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("corobench runs")
}

/// Every command that reads results, with its arguments.
const READERS: [&[&str]; 4] = [
    &["runs"],
    &["report", "latest"],
    &["compare", "latest", "latest"],
    &["run", "--resume", "latest"],
];

fn assert_usage_error(db: &Path, lab: &Lab, wants: &str) {
    let before = std::fs::read(db).ok();
    for args in READERS {
        let output = corobench(args, db, lab);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(wants), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(
            std::fs::read(db).ok(),
            before,
            "{args:?} left the file as it was"
        );
    }
}

#[test]
fn a_damaged_database_is_exit_2_from_every_command() {
    let dir = Lab::new();
    let db = dir.path("results.db");
    std::fs::write(
        &db,
        b"this is not an SQLite database, it is a text file".repeat(100),
    )
    .unwrap();
    assert_usage_error(
        &db,
        &dir,
        "is not a corobench result database or is corrupt",
    );
}

#[test]
fn an_empty_file_is_exit_2_and_gets_no_schema() {
    let dir = Lab::new();
    let db = dir.path("empty.db");
    std::fs::write(&db, b"").unwrap();
    assert_usage_error(&db, &dir, "holds no corobench schema");
}

#[test]
fn a_missing_database_is_exit_2_and_is_not_created() {
    let dir = Lab::new();
    let db = dir.path("missing.db");
    for args in READERS.iter().take(3) {
        let output = corobench(args, &db, &dir);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(!db.exists(), "{args:?} created the database");
    }
}
