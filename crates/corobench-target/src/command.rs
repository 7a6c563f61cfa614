//! Short helper commands (availability checks, tool versions, psql, initdb)
//! run to completion with their output captured and a deadline that kills
//! them, so a hung tool can never hang corobench.

use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::error::TargetError;
use crate::pipes::Pipes;

/// What a finished command printed.
#[derive(Debug)]
pub struct Captured {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Captured {
    /// stdout and stderr together, for error messages.
    #[must_use]
    pub fn output(&self) -> String {
        let mut text = self.stdout.trim_end().to_string();
        if !self.stderr.trim().is_empty() {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(self.stderr.trim_end());
        }
        text
    }
}

/// A command line as a person would type it: `go build -o '/a b/server' .`
#[must_use]
pub fn display(args: &[String]) -> String {
    args.iter()
        .map(|arg| {
            if !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%{}".contains(c))
            {
                arg.clone()
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `command` (in its own process group) to completion, capturing its
/// output; after `timeout` the whole group is killed and that is an error.
///
/// # Errors
/// The program cannot be started, or it outlived `timeout`.
pub fn run_captured(
    command: &mut Command,
    what: &str,
    timeout: Duration,
) -> Result<Captured, TargetError> {
    let shown = display(&program_and_args(command));
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn().map_err(|source| TargetError::Spawn {
        what: what.to_string(),
        command: shown.clone(),
        source,
    })?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        unreachable!("both pipes were requested above");
    };
    // Helper commands print little: their output is kept whole.
    let mut pipes = Pipes::new(Some(stdout), Some(stderr), usize::MAX);
    let deadline = Instant::now() + timeout;
    let status = loop {
        pipes.read_for(Duration::from_millis(50));
        if let Some(status) = child
            .try_wait()
            .map_err(|e| TargetError::io("wait for", &shown, e))?
        {
            break status;
        }
        if Instant::now() >= deadline {
            kill_group(&mut child);
            let message = format!("did not finish within {timeout:?} and was killed");
            return Err(TargetError::Command {
                command: shown,
                message,
            });
        }
    };
    // A grandchild may keep the pipes open: read what is there, briefly.
    pipes.drain(Instant::now() + Duration::from_millis(500));
    Ok(Captured {
        status,
        stdout: pipes.stdout.text(),
        stderr: pipes.stderr.text(),
    })
}

fn program_and_args(command: &Command) -> Vec<String> {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|s| s.to_string_lossy().into_owned())
        .collect()
}

fn kill_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: the child is unreaped, so its pid (= its group id) is still ours.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_both_streams_and_the_status() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo out; echo err >&2; exit 3"]);
        let captured = run_captured(&mut command, "a test", Duration::from_secs(30)).unwrap();
        assert_eq!(captured.status.code(), Some(3));
        assert_eq!(captured.stdout, "out\n");
        assert_eq!(captured.stderr, "err\n");
        assert_eq!(captured.output(), "out\nerr");
    }

    #[test]
    fn a_command_past_its_deadline_is_killed() {
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 1000 & sleep 1000"]);
        let error = run_captured(&mut command, "a test", Duration::from_millis(200)).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("did not finish within 200ms and was killed"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let mut command = Command::new("corobench-no-such-program");
        let error = run_captured(&mut command, "a test", Duration::from_secs(5)).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("cannot start `corobench-no-such-program` for a test")
        );
    }

    #[test]
    fn display_quotes_what_a_shell_would_split() {
        let args = ["go", "build", "-o", "/a b/server", "it's"].map(String::from);
        assert_eq!(display(&args), r"go build -o '/a b/server' 'it'\''s'");
    }
}
