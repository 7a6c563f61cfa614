//! Helpers shared by the integration tests: fixture targets, a scratch
//! directory per test, and waiting for a condition without timing it.

#![allow(dead_code)] // each test file uses a different subset

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use corobench_target::{BuildCache, BuiltTarget, LaunchOptions, Manifest, install_child_reaper};
use tempfile::TempDir;

/// The fixture targets' folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/targets")
}

/// A scratch directory and a fixture target built (or not needing a build)
/// in a cache inside it. The test process becomes a child subreaper, as
/// corobench does, so that the orphaned grandchildren of a stopped target
/// are reaped (this machine's init does not reap).
pub fn built(name: &str) -> (TempDir, BuiltTarget) {
    built_from(&fixtures(), name)
}

/// The program fixtures' folder (kept apart: tests count the targets').
pub fn program_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/programs")
}

/// [`built`] for a fixture program.
pub fn built_program(name: &str) -> (TempDir, BuiltTarget) {
    built_from(&program_fixtures(), name)
}

fn built_from(fixtures: &Path, name: &str) -> (TempDir, BuiltTarget) {
    install_child_reaper().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let manifest = Manifest::load(&fixtures.join(name)).unwrap();
    let cache = BuildCache::new(scratch.path().join("cache"));
    let built = cache
        .build(&manifest, &scratch.path().join("build.log"))
        .unwrap();
    (scratch, built)
}

/// Launch options with data, upload and work directories in `scratch`;
/// the data directory holds `healthz`, so a static file server is healthy.
pub fn options(scratch: &Path) -> LaunchOptions {
    let data_dir = scratch.join("data");
    std::fs::create_dir_all(&data_dir).unwrap();
    std::fs::write(data_dir.join("healthz"), "ok").unwrap();
    LaunchOptions {
        data_dir,
        upload_dir: scratch.join("upload"),
        work_dir: Some(scratch.join("work")),
        ..LaunchOptions::default()
    }
}

/// Polls `condition` until it holds; panics with `what` after a generous
/// bound, which only a broken implementation reaches.
pub fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
