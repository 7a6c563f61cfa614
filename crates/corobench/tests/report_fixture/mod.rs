//! The report fixture: two real runs stored by `corobench run` (see
//! tests/fixtures/report/regenerate.sh), copied to a scratch folder so no
//! test touches the committed database.

#![allow(dead_code)] // each test file uses a different part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use corobench_store::Store;

/// A scratch copy of the fixture database and the ids of its runs.
pub struct Fixture {
    dir: tempfile::TempDir,
    pub db: PathBuf,
    /// The older run (six trials per scenario, epoll generator).
    pub run_a: String,
    /// The newer run (five trials, io_uring generator).
    pub run_b: String,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("runs.db");
        std::fs::copy(
            repo_path("crates/corobench/tests/fixtures/report/runs.db"),
            &db,
        )
        .unwrap();
        let store = Store::open_existing(&db).unwrap();
        let mut runs = store.runs().unwrap();
        runs.sort_by_key(|r| r.started_at_unix_ms);
        assert_eq!(runs.len(), 2, "the fixture holds two runs");
        Self {
            run_a: runs[0].id.clone(),
            run_b: runs[1].id.clone(),
            db,
            dir,
        }
    }

    /// Runs corobench with `args` and `--db` pointing at the copy.
    pub fn corobench(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_corobench"))
            .args(args)
            .arg("--db")
            .arg(&self.db)
            .env_remove("NO_COLOR")
            .output()
            .expect("corobench runs")
    }

    /// A path in the scratch folder.
    pub fn scratch(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// A captured profile of scenario 0 (three samples of two stacks) and a
/// skipped one of scenario 1.
pub fn two_profiles() -> Vec<corobench_model::ProfileRecord> {
    use corobench_model::{ProfileOutcome, ProfileRecord};
    let profile = |scenario_index, outcome| ProfileRecord {
        scenario_index,
        frequency_hz: 99,
        started_at_unix_ms: 1_763_793_190_000,
        outcome,
    };
    vec![
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
    ]
}

/// A claim about the fixture's runs: go-nethttp serves 1.3× node-http's
/// plaintext req/s at 8 connections.
pub fn plaintext_claim() -> corobench_model::ClaimRecord {
    use corobench_model::{ClaimExpectation, ClaimRecord, ClaimScenario, ClaimSide, Metric};
    let side = |target: &str, key: &str| ClaimSide {
        selector: target.to_owned(),
        target: target.to_owned(),
        resolved: ClaimScenario::Scenario(key.into()),
    };
    ClaimRecord {
        source: "a benchmark post (wrk -c8)".to_owned(),
        says: "Go net/http serves 1.3x Node.js on plaintext".to_owned(),
        workload: Some("plaintext".to_owned()),
        metric: Metric::RequestsPerS,
        a: side("go-nethttp", "go-nethttp/plaintext/c=8"),
        b: side("node-http", "node-http/plaintext/c=8"),
        expectation: ClaimExpectation::Ratio {
            ratio: 1.3,
            tolerance: 0.1,
        },
        published: None,
    }
}

/// A path relative to the repository root.
pub fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative)
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts success and returns stdout.
pub fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}\nstderr: {}",
        output.status.code(),
        stderr(output)
    );
    stdout(output)
}

/// Asserts exit status 2 (a usage error) and returns the message.
pub fn usage_error(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(2),
        "expected a usage error; stderr: {}",
        stderr(output)
    );
    stderr(output)
}
