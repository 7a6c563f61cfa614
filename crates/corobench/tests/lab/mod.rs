//! The one test lab of the end-to-end tests: a scratch folder holding
//! targets, specs, a build cache, a results database and the temporary
//! folder of every corobench it starts, so that a test leaves nothing
//! behind, not even the work folder of a corobench it killed.
#![allow(dead_code)]

mod running;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

#[allow(unused_imports)] // Not every test binary starts a server itself.
pub use running::AlreadyRunning;

/// A scratch folder every corobench of a test runs in.
#[derive(Debug)]
pub struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    /// An empty lab: `targets/` and `tmp/` exist, nothing else.
    #[must_use]
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("targets")).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        Self { dir }
    }

    /// The lab's folder.
    #[must_use]
    pub fn root(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// `name` inside the lab.
    #[must_use]
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The lab's targets folder.
    #[must_use]
    pub fn targets(&self) -> PathBuf {
        self.path("targets")
    }

    /// The lab's results database.
    #[must_use]
    pub fn db(&self) -> PathBuf {
        self.path("results.db")
    }

    /// Writes `text` to `name` in the lab and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A target named `name`: the test kit's contract server.
    pub fn kit_target(&self, name: &str) {
        corobench_testkit::write_target(
            &self.targets(),
            name,
            "goroutine-per-connection",
            corobench_testkit::binary_path(),
            &[],
        )
        .unwrap();
    }

    /// corobench with `args`, inside the lab (cache, targets, temporary
    /// folder), without standard input.
    #[must_use]
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_corobench"));
        command.args(args);
        self.inside(&mut command);
        command
    }

    /// Points `command` (a corobench, perhaps started through another
    /// program) at the lab's cache, targets and temporary folder, without
    /// standard input.
    pub fn inside<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        command
            .env("COROBENCH_CACHE", self.path("cache"))
            .env("COROBENCH_TARGETS", self.targets())
            .env("TMPDIR", self.path("tmp"))
            .stdin(Stdio::null())
    }

    /// [`Lab::command`] with the lab's results database (`--db`) after `args`.
    #[must_use]
    pub fn command_with_db(&self, args: &[&str]) -> Command {
        let mut command = self.command(args);
        command.arg("--db").arg(self.db());
        command
    }

    /// The (scenario, trial) pairs stored in the latest run of the lab's
    /// database; none while it does not exist yet.
    #[must_use]
    pub fn stored_trials(&self) -> Vec<(u32, u32)> {
        let Ok(store) = corobench_store::Store::open_existing(self.db()) else {
            return Vec::new();
        };
        let Ok(id) = store.resolve_run_id("latest") else {
            return Vec::new();
        };
        store.completed_trials(&id).unwrap_or_default()
    }

    /// Runs corobench with `args` and the lab's database, to its end.
    #[must_use]
    pub fn run(&self, args: &[&str]) -> Output {
        self.command_with_db(args).output().expect("corobench runs")
    }
}

/// Bytes a process wrote, as text.
#[must_use]
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
