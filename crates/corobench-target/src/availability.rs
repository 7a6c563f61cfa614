//! Whether a target can run on this machine, and the versions of its tools.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Serialize;

use crate::command::{self, run_captured};
use crate::manifest::{AvailableIf, Manifest};

/// How long an availability check or a version command may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Whether a target can run here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Availability {
    Available,
    /// `reason` says what is missing; `hint` (from the manifest) how to get it.
    Unavailable {
        reason: String,
        hint: Option<String>,
    },
}

impl Availability {
    #[must_use]
    pub fn is_available(&self) -> bool {
        matches!(self, Self::Available)
    }
}

impl Manifest {
    /// Available when every `requires` command is on PATH and `available_if`
    /// (if any) exits 0 printing every `stdout_contains` text.
    #[must_use]
    pub fn availability(&self) -> Availability {
        let reason = self
            .requires
            .iter()
            .find(|program| find_on_path(program).is_none())
            .map(|program| format!("`{program}` is not on PATH"))
            .or_else(|| {
                self.available_if
                    .as_ref()
                    .and_then(|check| failed_check(check, &self.dir))
            });
        match reason {
            None => Availability::Available,
            Some(reason) => Availability::Unavailable {
                reason,
                hint: self.hint.clone(),
            },
        }
    }

    /// Each `versions` command line mapped to the first line it printed
    /// (stdout, else stderr, as `java -version` does), or to why it failed.
    #[must_use]
    pub fn tool_versions(&self) -> BTreeMap<String, String> {
        self.versions
            .iter()
            .map(|args| (command::display(args), version_of(args, &self.dir)))
            .collect()
    }
}

fn version_of(args: &[String], dir: &Path) -> String {
    let mut command = Command::new(&args[0]);
    command.args(&args[1..]).current_dir(dir);
    match run_captured(&mut command, "a tool version", PROBE_TIMEOUT) {
        Ok(out) if out.status.success() => {
            let text = if out.stdout.trim().is_empty() {
                &out.stderr
            } else {
                &out.stdout
            };
            text.lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("")
                .to_string()
        }
        Ok(out) => format!("unknown: exited with {}", out.status),
        Err(error) => format!("unknown: {error}"),
    }
}

/// Why `check` fails here, or `None` when it passes.
fn failed_check(check: &AvailableIf, dir: &Path) -> Option<String> {
    let shown = command::display(&check.command);
    let mut command = Command::new(&check.command[0]);
    command.args(&check.command[1..]).current_dir(dir);
    let out = match run_captured(&mut command, "an availability check", PROBE_TIMEOUT) {
        Ok(out) => out,
        Err(error) => return Some(error.to_string()),
    };
    if !out.status.success() {
        return Some(format!("`{shown}` exited with {}", out.status));
    }
    check
        .stdout_contains
        .iter()
        .find(|text| !out.stdout.contains(text.as_str()))
        .map(|text| format!("the output of `{shown}` lacks {text:?}"))
}

/// The executable `program` would run: itself if it has a slash, else the
/// first match on PATH.
#[must_use]
pub fn find_on_path(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return is_executable(Path::new(program)).then(|| PathBuf::from(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_programs_on_path() {
        assert!(find_on_path("sh").is_some());
        assert_eq!(find_on_path("/bin/sh"), Some(PathBuf::from("/bin/sh")));
        assert_eq!(find_on_path("corobench-no-such-program"), None);
        assert_eq!(find_on_path("/nonexistent/sh"), None);
    }

    #[test]
    fn a_check_fails_on_status_and_on_missing_text() {
        let dir = Path::new(".");
        let check = |args: &[&str], contains: &[&str]| AvailableIf {
            command: args.iter().map(|s| (*s).to_string()).collect(),
            stdout_contains: contains.iter().map(|s| (*s).to_string()).collect(),
        };
        assert_eq!(
            failed_check(
                &check(&["sh", "-c", "echo 'io_uring => enabled'"], &["io_uring"]),
                dir
            ),
            None
        );
        let reason = failed_check(&check(&["sh", "-c", "exit 1"], &[]), dir).unwrap();
        assert_eq!(reason, "`sh -c 'exit 1'` exited with exit status: 1");
        let reason = failed_check(&check(&["echo", "epoll"], &["io_uring"]), dir).unwrap();
        assert_eq!(reason, "the output of `echo epoll` lacks \"io_uring\"");
    }
}
