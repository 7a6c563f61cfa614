//! `perf record` attached to a running process tree.
//!
//! `perf record -F 99 -g -p PIDS` samples the call stacks of every thread of
//! the given processes, and (perf's default inheritance) of the threads and
//! processes they start while it records. It stops on SIGINT, writes its
//! data file, and `perf script` turns that file into text to fold.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use corobench_model::{PerfAccess, PerfHappened};

use crate::FREQUENCY_HZ;
use crate::error::ProfileError;
use crate::fold::{FoldedStacks, fold};

/// The program run when the caller names none.
pub const PERF_PROGRAM: &str = "perf";

/// The fields `perf script` prints: no `period`, so folding counts samples.
const SCRIPT_FIELDS: &str = "comm,tid,time,event,ip,sym,dso";

/// How long `perf record` gets to attach, or to refuse, before the load starts.
const ATTACH_WAIT: Duration = Duration::from_millis(300);

/// How long `perf record` gets to write its data file after SIGINT.
const STOP_WAIT: Duration = Duration::from_secs(30);

/// The highest `perf_event_paranoid` at which a user without privileges
/// may sample its own processes with their kernel stacks.
const ALLOWED_PARANOID: i32 = 1;

/// A `perf record` in progress; [`Recording::finish`] stops it and folds
/// what it sampled. Dropping it unfinished stops and reaps `perf`.
#[derive(Debug)]
pub struct Recording {
    program: String,
    /// The command line, as messages name it.
    command: String,
    child: Option<Child>,
    data: PathBuf,
    stderr: PathBuf,
    stop_wait: Duration,
}

/// How a stop ended.
enum Stopped {
    Exited(ExitStatus),
    /// It did not exit within the stop wait, and was killed.
    Hung,
    /// It had already been reaped.
    NotRunning,
}

impl Recording {
    /// Starts `program` (normally [`PERF_PROGRAM`]) recording the processes
    /// `pids`, with its files in `dir`.
    ///
    /// # Errors
    /// `perf` is missing, cannot start, or refuses at once (permissions).
    pub fn start(program: &str, pids: &[i32], dir: &Path) -> Result<Self, ProfileError> {
        if pids.is_empty() {
            return Err(ProfileError::NoProcess);
        }
        let data = dir.join("perf.data");
        let stderr = dir.join("perf-record.stderr");
        let log = File::create(&stderr).map_err(|source| ProfileError::Io {
            doing: "create perf's log",
            source,
        })?;
        let pid_list = pids
            .iter()
            .map(i32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let frequency = FREQUENCY_HZ.to_string();
        let command = format!(
            "{program} record -F {frequency} -g -o {} -p {pid_list}",
            data.display()
        );
        let child = Command::new(program)
            .args(["record", "-F", &frequency, "-g", "-o"])
            .arg(&data)
            .args(["-p", &pid_list])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|source| spawn_error(program, source))?;
        let mut recording = Self {
            program: program.to_owned(),
            command,
            child: Some(child),
            data,
            stderr,
            stop_wait: STOP_WAIT,
        };
        recording.check_attached()?;
        Ok(recording)
    }

    /// Fails when `perf` exited during its first moments: it refused.
    fn check_attached(&mut self) -> Result<(), ProfileError> {
        let deadline = Instant::now() + ATTACH_WAIT;
        while Instant::now() < deadline {
            if let Some(status) = self.try_wait()? {
                self.child = None;
                return Err(self.refused(Some(status)));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Stops `perf record`, runs `perf script` on its data and folds it.
    ///
    /// # Errors
    /// `perf` failed, wrote no data, or sampled nothing.
    pub fn finish(mut self) -> Result<FoldedStacks, ProfileError> {
        let status = match self.stop()? {
            Stopped::Hung => return Err(self.hung()),
            Stopped::Exited(status) => Some(status),
            Stopped::NotRunning => None,
        };
        if !self.data.is_file() {
            return Err(self.refused(status));
        }
        let output = Command::new(&self.program)
            .args(["script", "--no-inline", "-F", SCRIPT_FIELDS, "-i"])
            .arg(&self.data)
            .stdin(Stdio::null())
            .output()
            .map_err(|source| spawn_error(&self.program, source))?;
        if !output.status.success() {
            return Err(ProfileError::Script(first_line(&output.stderr)));
        }
        let folded = fold(&output.stdout)?;
        if folded.samples == 0 {
            return Err(ProfileError::NoSamples);
        }
        Ok(folded)
    }

    fn try_wait(&mut self) -> Result<Option<ExitStatus>, ProfileError> {
        let Some(child) = self.child.as_mut() else {
            return Ok(None);
        };
        child.try_wait().map_err(|source| ProfileError::Io {
            doing: "wait for perf record",
            source,
        })
    }

    /// Sends SIGINT (perf's signal to stop and write its file) and reaps it;
    /// after the stop wait ([`STOP_WAIT`]) it is killed.
    fn stop(&mut self) -> Result<Stopped, ProfileError> {
        let Some(mut child) = self.child.take() else {
            return Ok(Stopped::NotRunning);
        };
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: `pid` is our own child, not yet reaped, so the pid
            // still names it; kill(2) has no memory effects.
            unsafe { libc::kill(pid, libc::SIGINT) };
        }
        let deadline = Instant::now() + self.stop_wait;
        loop {
            let waited = child.try_wait().map_err(|source| ProfileError::Io {
                doing: "wait for perf record",
                source,
            })?;
            if let Some(status) = waited {
                return Ok(Stopped::Exited(status));
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(Stopped::Hung);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Why `perf record` ended without data, from what it wrote to stderr.
    fn refused(&self, status: Option<ExitStatus>) -> ProfileError {
        let log = fs::read(&self.stderr).unwrap_or_default();
        let mut message = first_error_line(&log);
        if message.is_empty() {
            message = status.map_or_else(
                || "it had already stopped and said nothing".to_owned(),
                |s| format!("it exited with {s} and said nothing"),
            );
        }
        let happened = if says_permission(&log) {
            PerfHappened::Denied
        } else {
            PerfHappened::Failed
        };
        let advice = PerfAccess::here(ALLOWED_PARANOID)
            .advice(&happened)
            .map_or_else(String::new, |advice| format!("; {advice}"));
        ProfileError::Refused { message, advice }
    }

    /// `perf record` did not stop when asked.
    fn hung(&self) -> ProfileError {
        let happened = PerfHappened::Hung {
            command: self.command.clone(),
            timeout: self.stop_wait,
        };
        ProfileError::Hung {
            advice: PerfAccess::here(ALLOWED_PARANOID)
                .advice(&happened)
                .unwrap_or_default(),
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn spawn_error(program: &str, source: io::Error) -> ProfileError {
    if source.kind() == io::ErrorKind::NotFound {
        ProfileError::PerfMissing {
            program: program.to_owned(),
        }
    } else {
        ProfileError::Spawn {
            program: program.to_owned(),
            source,
        }
    }
}

fn first_line(text: &[u8]) -> String {
    String::from_utf8_lossy(text)
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("it said nothing")
        .to_owned()
}

/// The first line of perf's stderr that reports a failure, else its first line.
fn first_error_line(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| {
            let lower = l.to_ascii_lowercase();
            lower.contains("error") || lower.contains("denied") || lower.contains("not")
        })
        .or_else(|| lines().next())
        .unwrap_or_default()
        .to_owned()
}

/// Whether perf's stderr says the kernel refused it permission
/// (EACCES or EPERM, or perf's own note on `perf_event_paranoid`).
fn says_permission(text: &[u8]) -> bool {
    let lower = String::from_utf8_lossy(text).to_ascii_lowercase();
    [
        "permission",
        "not permitted",
        "perf_event_paranoid",
        "access to performance",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_perf_says_which_package_brings_it() {
        let dir = tempfile::tempdir().unwrap();
        let error = Recording::start("/nonexistent/perf", &[1], dir.path()).unwrap_err();
        assert!(matches!(error, ProfileError::PerfMissing { .. }), "{error}");
        assert!(error.to_string().contains("linux-perf"), "{error}");
    }

    /// A shell script standing in for perf, in `dir`.
    fn fake_perf(dir: &Path, body: &str) -> String {
        let script = dir.join("perf");
        fs::write(&script, format!("#!/bin/sh\n{body}")).unwrap();
        fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        script.to_str().unwrap().to_owned()
    }

    #[test]
    fn a_perf_that_exits_at_once_is_a_refusal_with_its_message() {
        let dir = tempfile::tempdir().unwrap();
        let perf = fake_perf(
            dir.path(),
            "echo 'Error: No permission to enable cpu-clock event.' >&2\nexit 255\n",
        );
        let error = Recording::start(&perf, &[1], dir.path()).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("perf record was refused: Error: No permission to enable"),
            "{error}"
        );
    }

    #[test]
    fn a_perf_that_fails_for_another_reason_is_not_blamed_on_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let perf = fake_perf(dir.path(), "echo 'Error: bad -F value' >&2\nexit 1\n");
        let error = Recording::start(&perf, &[1], dir.path()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "perf record was refused: Error: bad -F value"
        );
    }

    #[test]
    fn a_perf_that_hangs_is_reported_hung_with_its_command_and_wait() {
        let dir = tempfile::tempdir().unwrap();
        // Ignores SIGINT, as a perf stuck in the kernel does.
        let perf = fake_perf(dir.path(), "trap '' INT\nwhile :; do sleep 0.05; done\n");
        let mut recording = Recording::start(&perf, &[1], dir.path()).unwrap();
        recording.stop_wait = Duration::from_millis(200);
        let error = recording.finish().unwrap_err().to_string();
        assert!(
            error.starts_with("perf record hung, so no profile was taken: `")
                && error.contains(&format!("{perf} record -F 99 -g -o "))
                && error.contains(" -p 1` had not finished 0.2 s after it was asked to stop"),
            "{error}"
        );
        assert!(!error.contains("paranoid"), "{error}");
        assert!(!error.contains("root"), "{error}");
    }

    #[test]
    fn an_empty_tree_is_not_profiled() {
        let dir = tempfile::tempdir().unwrap();
        let error = Recording::start(PERF_PROGRAM, &[], dir.path()).unwrap_err();
        assert!(matches!(error, ProfileError::NoProcess));
    }
}
