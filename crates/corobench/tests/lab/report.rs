//! The report fixture: two real runs stored by `corobench run` (see
//! tests/fixtures/report/regenerate.sh), copied into a lab's results
//! database so no test touches the committed one.

use std::path::PathBuf;
use std::process::Output;

use corobench_store::Store;

use super::{Lab, repo_path};

/// A lab whose database is a copy of the fixture's, and the ids of its runs.
pub struct Fixture {
    pub lab: Lab,
    /// The lab's copy of the fixture database.
    pub db: PathBuf,
    /// The older run (six trials per scenario, epoll generator).
    pub run_a: String,
    /// The newer run (five trials, io_uring generator).
    pub run_b: String,
}

impl Fixture {
    pub fn new() -> Self {
        let lab = Lab::new();
        let db = lab.db();
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
            lab,
        }
    }

    /// Runs corobench with `args` and `--db` pointing at the copy.
    pub fn corobench(&self, args: &[&str]) -> Output {
        self.lab
            .command_with_db(args)
            .env_remove("NO_COLOR")
            .output()
            .expect("corobench runs")
    }

    /// A path in the lab.
    pub fn scratch(&self, name: &str) -> PathBuf {
        self.lab.path(name)
    }

    /// The older run as the analysis library sees it, read from the copy.
    pub fn stored_run_a(&self) -> corobench_model::StoredRun {
        Store::open_existing(&self.db)
            .unwrap()
            .load_run(&self.run_a)
            .unwrap()
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
