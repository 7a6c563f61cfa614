//! The source hash (exclusions, inputs, stable order) and the build cache
//! (atomic, reused, failures reported with the log).

mod common;

use std::path::{Path, PathBuf};

use common::{eventually, fixtures, options};
use corobench_target::{BuildCache, BuildOutcome, Manifest, TargetError, source_hash};
use tempfile::TempDir;

/// A copy of the `built` fixture and its `shared` input, free to change.
fn copy_of_built() -> (TempDir, Manifest) {
    let root = tempfile::tempdir().unwrap();
    for name in ["built", "shared"] {
        copy_dir(&fixtures().join(name), &root.path().join(name));
    }
    let manifest = Manifest::load(&root.path().join("built")).unwrap();
    (root, manifest)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

fn write(path: PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_hash_ignores_exclusions_and_follows_sources_and_inputs() {
    let (root, manifest) = copy_of_built();
    let dir = root.path().join("built");
    let original = source_hash(&manifest).unwrap();
    assert_eq!(original.len(), 64);
    assert_eq!(source_hash(&manifest).unwrap(), original, "stable");

    write(dir.join("scratch.tmp"), "excluded by *.tmp");
    write(dir.join("notes/today.md"), "excluded by name");
    for always in [
        ".git/HEAD",
        "target/x",
        "node_modules/x/index.js",
        ".venv/bin/python",
        "__pycache__/a.pyc",
    ] {
        write(dir.join(always), "always excluded");
    }
    write(dir.join("sub/target/deep.o"), "excluded at any depth");
    assert_eq!(
        source_hash(&manifest).unwrap(),
        original,
        "exclusions change nothing"
    );

    write(dir.join("sub/new.sh"), "echo new");
    let with_new_file = source_hash(&manifest).unwrap();
    assert_ne!(
        with_new_file, original,
        "a new source file changes the hash"
    );

    write(
        root.path().join("shared/lib.sh"),
        "say_ready() { echo changed >&2; }\n",
    );
    assert_ne!(
        source_hash(&manifest).unwrap(),
        with_new_file,
        "an input changes the hash"
    );
}

#[test]
fn the_hash_covers_names_and_modes_not_creation_order() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    for (root, order) in [(&one, ["a", "b", "c/d"]), (&two, ["c/d", "b", "a"])] {
        copy_dir(&fixtures().join("web"), &root.path().join("web"));
        for name in order {
            write(root.path().join("web").join(name), name);
        }
    }
    let hash =
        |root: &TempDir| source_hash(&Manifest::load(&root.path().join("web")).unwrap()).unwrap();
    assert_eq!(
        hash(&one),
        hash(&two),
        "the order files were made in does not matter"
    );

    std::fs::rename(two.path().join("web/a"), two.path().join("web/a2")).unwrap();
    assert_ne!(hash(&one), hash(&two), "a renamed file changes the hash");
    std::fs::rename(two.path().join("web/a2"), two.path().join("web/a")).unwrap();
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(two.path().join("web/a"), mode).unwrap();
    assert_ne!(hash(&one), hash(&two), "an executable bit changes the hash");
}

#[test]
fn a_build_is_cached_by_its_sources_and_launches_from_the_cache() {
    let (root, manifest) = copy_of_built();
    let cache = BuildCache::new(root.path().join("cache"));
    let log = root.path().join("logs/built.log");
    assert!(!cache.is_built(&manifest).unwrap());

    let (built, outcome) = cache.build_with_outcome(&manifest, &log).unwrap();
    assert_eq!(outcome, BuildOutcome::Built);
    let hash16 = &built.source_hash[..16];
    assert_eq!(
        built.out_dir,
        root.path().join(format!("cache/targets/built-{hash16}"))
    );
    assert_eq!(std::fs::read_to_string(log).unwrap(), "built\n");
    let flavour = std::fs::read_to_string(built.out_dir.join("flavour")).unwrap();
    assert_eq!(
        flavour,
        format!("plain {}\n", root.path().join("cache").display())
    );
    assert!(cache.is_built(&manifest).unwrap());
    let leftovers: Vec<_> = std::fs::read_dir(root.path().join("cache/targets"))
        .unwrap()
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary build directory remains");

    let (again, outcome) = cache
        .build_with_outcome(&manifest, &root.path().join("again.log"))
        .unwrap();
    assert_eq!(outcome, BuildOutcome::Cached);
    assert_eq!(again, built);
    assert!(
        !root.path().join("again.log").exists(),
        "a cached build runs nothing"
    );

    let running = built.launch(&options(root.path())).unwrap();
    eventually("the installed script runs", || {
        running.stderr_tail(1) == "ready"
    });
    running.stop().unwrap();

    write(root.path().join("built/extra.txt"), "changed sources");
    assert!(
        !cache.is_built(&manifest).unwrap(),
        "new sources need a new build"
    );
}

#[test]
fn a_failed_build_reports_its_command_status_and_log_and_caches_nothing() {
    let root = tempfile::tempdir().unwrap();
    let text = r#"name = "broken"
model = "worker-pool"
summary = "fails to build"
language = "sh"

[build]
command = ["sh", "-c", "echo compiling; touch {out}/half-built; echo 'error: missing semicolon' >&2; exit 2"]

[run]
command = ["{out}/server"]
"#;
    write(root.path().join("broken/target.toml"), text);
    let manifest = Manifest::load(&root.path().join("broken")).unwrap();
    let cache = BuildCache::new(root.path().join("cache"));
    let log = root.path().join("broken.log");
    let error = cache.build(&manifest, &log).unwrap_err();
    let TargetError::Build {
        status, log_tail, ..
    } = &error
    else {
        panic!("not a build error: {error}");
    };
    assert_eq!(status, "failed (exit status: 2)");
    assert_eq!(log_tail, "compiling\nerror: missing semicolon");
    let message = error.to_string();
    assert!(
        message.starts_with("target broken: build failed: `sh -c 'echo compiling; touch "),
        "{message}"
    );
    assert!(
        message.contains(&format!("(exit status: 2); log {}:\n", log.display())),
        "{message}"
    );
    assert!(
        !cache.is_built(&manifest).unwrap(),
        "a failed build never looks built"
    );
    let entries = std::fs::read_dir(root.path().join("cache/targets"))
        .unwrap()
        .count();
    assert_eq!(entries, 0, "the half-built output is removed");
}

#[test]
fn leftovers_of_interrupted_builds_never_look_built_and_are_cleaned_up() {
    let (root, manifest) = copy_of_built();
    let cache = BuildCache::new(root.path().join("cache"));
    let (out_dir, _) = cache.out_dir(&manifest).unwrap();
    let name = out_dir.file_name().unwrap().to_string_lossy().into_owned();
    // A build by a process that no longer exists (pid_max is below 2^22).
    let stale = out_dir.with_file_name(format!(".{name}.partial-4194999"));
    write(stale.join("serve.sh"), "half written");
    assert!(!cache.is_built(&manifest).unwrap());

    cache.build(&manifest, &root.path().join("log")).unwrap();
    assert!(
        !stale.exists(),
        "the interrupted build's directory is removed"
    );
    assert!(cache.is_built(&manifest).unwrap());
}

#[test]
fn a_target_without_build_runs_from_its_folder() {
    let (root, manifest) = copy_of_built();
    let mut manifest = manifest;
    manifest.build = None;
    let cache = BuildCache::new(root.path().join("cache"));
    assert!(cache.is_built(&manifest).unwrap());
    let (built, outcome) = cache
        .build_with_outcome(&manifest, &root.path().join("log"))
        .unwrap();
    assert_eq!(outcome, BuildOutcome::NothingToBuild);
    assert_eq!(built.out_dir, manifest.dir);
}
