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
