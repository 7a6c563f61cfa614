//! The one test lab of the end-to-end tests: a scratch folder holding
//! targets, specs, a build cache, a results database and the temporary
//! folder of every corobench it starts, so that a test leaves nothing
//! behind, not even the work folder of a corobench it killed. Its report
//! fixture is a lab holding a copy of two stored runs.
#![allow(dead_code)] // each test file uses a different part

mod report;
mod running;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

#[allow(unused_imports)] // the report tests use them
pub use report::{Fixture, plaintext_claim, two_profiles};
#[allow(unused_imports)] // the tests of servers already running use it
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

    /// [`Lab::kit_target`] whose manifest declares `protocols` in its
    /// `[protocols]` table, one `NAME = true` each (`tls`, `h2`, `h2c`).
    pub fn kit_target_serving(&self, name: &str, protocols: &[&str]) {
        self.kit_target(name);
        let manifest = self.targets().join(name).join("target.toml");
        let mut text = std::fs::read_to_string(&manifest).unwrap();
        text.push_str("\n[protocols]\n");
        for protocol in protocols {
            text.push_str(&format!("{protocol} = true\n"));
        }
        std::fs::write(&manifest, text).unwrap();
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

    /// Runs corobench with `args` inside the lab, to its end.
    #[must_use]
    pub fn corobench(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("corobench runs")
    }
}

/// Runs corobench with `args` to its end, inside a lab of its own: for a
/// command that needs no file of the test's.
#[must_use]
pub fn corobench(args: &[&str]) -> Output {
    Lab::new().corobench(args)
}

/// Bytes a process wrote, as text.
#[must_use]
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What a process printed on stdout.
#[must_use]
pub fn stdout(output: &Output) -> String {
    text(&output.stdout)
}

/// What a process printed on stderr.
#[must_use]
pub fn stderr(output: &Output) -> String {
    text(&output.stderr)
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

/// The load report of a stored trial, or a panic saying why it failed.
pub fn load_of(trial: &corobench_model::TrialRecord) -> &corobench_model::LoadReport {
    trial
        .load
        .as_ref()
        .unwrap_or_else(|| panic!("trial failed: {:?}", trial.failure))
}

/// Asserts that the run ended with exit status `code`, saying `says` on stderr.
pub fn assert_refused(output: &Output, code: i32, says: &str) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{text}");
    assert!(text.contains(says), "expected {says:?} in: {text}");
}

/// Asserts that it ended with exit status `code`, and returns its stderr.
pub fn exited(output: &Output, code: i32) -> String {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{text}");
    text
}

/// Asserts that `text` says every one of `pieces`.
pub fn assert_says(text: &str, pieces: &[&str]) {
    for piece in pieces {
        assert!(text.contains(piece), "expected {piece:?} in: {text}");
    }
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

/// A path relative to the repository root.
#[must_use]
pub fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative)
}

/// Where `report` breaks docs/schema/load-report.schema.json; empty when it conforms.
#[must_use]
pub fn load_report_schema_errors(report: &serde_json::Value) -> Vec<String> {
    let schema_path = repo_path("docs/schema/load-report.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema");
    validator
        .iter_errors(report)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}
