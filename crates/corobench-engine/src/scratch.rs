//! Scratch folders: a run works in `$TMPDIR/corobench-run-PID`, a
//! verification in `$TMPDIR/corobench-verify-PID`, a served target in
//! `$TMPDIR/corobench-serve-PID`, the quick form keeps its spec in
//! `$TMPDIR/corobench-bench-PID`, each removed when it ends; each target
//! it launches works in `$TMPDIR/corobench-PID-NAME-N`.
//! A corobench killed with SIGKILL cannot remove its own, so every run,
//! verification and `serve` first removes those whose process is gone.

use std::path::PathBuf;

use crate::error::EngineError;

/// The kinds of scratch folder, by the word in their name.
const KINDS: [&str; 4] = ["run", "verify", "serve", "bench"];

/// This process's scratch folder of `kind` (`run`, `verify`, `serve` or
/// `bench`).
#[must_use]
pub fn folder(kind: &str) -> PathBuf {
    std::env::temp_dir().join(format!("corobench-{kind}-{}", std::process::id()))
}

/// `$TMPDIR` must exist: creating it would scatter folders (at `/` for a
/// mistyped absolute path) where nobody looks.
///
/// # Errors
/// The folder does not exist or is not a folder.
pub fn check_temp_dir() -> Result<(), EngineError> {
    let dir = std::env::temp_dir();
    if dir.is_dir() {
        return Ok(());
    }
    Err(EngineError::NoTempDir(dir))
}

/// Removes the scratch folders of corobench processes that no longer exist.
/// A folder whose pid runs (whatever the process) is left alone.
pub fn remove_stale() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner_pid) else {
            continue;
        };
        if pid != std::process::id() && !PathBuf::from(format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The pid in `corobench-run-PID`, `corobench-verify-PID`,
/// `corobench-serve-PID`, `corobench-bench-PID`, or a launched target's
/// `corobench-PID-NAME-N`.
fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("corobench-")?;
    if let Some(pid) = KINDS
        .iter()
        .find_map(|kind| rest.strip_prefix(kind)?.strip_prefix('-'))
    {
        return pid.parse().ok();
    }
    let (pid, target) = rest.split_once('-')?;
    let digits = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    (digits && target.contains('-')).then(|| pid.parse().ok())?
}

#[cfg(test)]
mod tests {
    use super::owner_pid;

    #[test]
    fn only_corobench_scratch_folders_name_an_owner() {
        assert_eq!(owner_pid("corobench-run-1234"), Some(1234));
        assert_eq!(owner_pid("corobench-verify-7"), Some(7));
        // Issue "hostile input, third round", left behind 2: the quick
        // form's folder was never removed after a SIGKILL.
        assert_eq!(owner_pid("corobench-bench-99"), Some(99));
        assert_eq!(owner_pid("corobench-run-12x"), None);
        assert_eq!(owner_pid("corobench-cpu-0.lock"), None);
        assert_eq!(owner_pid("other-run-1"), None);
    }

    /// Issue "wrong successes", item 11: the work folders of targets that a
    /// killed corobench launched were left behind for good.
    #[test]
    fn a_launched_target_folder_names_its_owner() {
        assert_eq!(owner_pid("corobench-4242-php-fpm-3"), Some(4242));
        assert_eq!(owner_pid("corobench-77-go-nethttp-0"), Some(77));
        assert_eq!(owner_pid("corobench-77-"), None);
        assert_eq!(owner_pid("corobench-77"), None);
        assert_eq!(owner_pid("corobench-7x-go-0"), None);
    }
}
