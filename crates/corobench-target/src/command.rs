//! Short helper commands (availability checks, tool versions, psql, initdb)
//! run to completion with their output captured and a deadline that kills
//! them, so a hung tool can never hang corobench.

use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::error::TargetError;

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
    let mut pipes = Pipes::new(stdout, stderr);
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
        stdout: String::from_utf8_lossy(&pipes.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&pipes.stderr).into_owned(),
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

/// The two output pipes, read without blocking.
struct Pipes {
    out: Option<ChildStdout>,
    err: Option<ChildStderr>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Pipes {
    fn new(out: ChildStdout, err: ChildStderr) -> Self {
        Self {
            out: Some(out),
            err: Some(err),
            stdout: Vec::new(),
            stderr: Vec::new(),
        }
    }

    fn open(&self) -> bool {
        self.out.is_some() || self.err.is_some()
    }

    /// Waits up to `wait` for output and reads whatever arrived.
    fn read_for(&mut self, wait: Duration) {
        if !self.open() {
            std::thread::sleep(wait);
            return;
        }
        let mut fds: Vec<libc::pollfd> = [
            self.out.as_ref().map(AsRawFd::as_raw_fd),
            self.err.as_ref().map(AsRawFd::as_raw_fd),
        ]
        .into_iter()
        .flatten()
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
        let wait_ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: `fds` is a valid array of pollfd of the length passed.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait_ms) };
        if ready <= 0 {
            return;
        }
        if self.out.is_some() {
            read_some(&mut self.out, &mut self.stdout, &fds);
        }
        if self.err.is_some() {
            read_some(&mut self.err, &mut self.stderr, &fds);
        }
    }

    fn drain(&mut self, until: Instant) {
        while self.open() && Instant::now() < until {
            self.read_for(Duration::from_millis(20));
        }
    }
}

/// Reads once from a pipe that poll reported readable; closes it at EOF.
fn read_some<R: std::io::Read + AsRawFd>(
    pipe: &mut Option<R>,
    into: &mut Vec<u8>,
    fds: &[libc::pollfd],
) {
    let Some(reader) = pipe.as_mut() else { return };
    let fd = reader.as_raw_fd();
    let readable = fds
        .iter()
        .any(|p| p.fd == fd && p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0);
    if !readable {
        return;
    }
    let mut buffer = [0u8; 8192];
    match reader.read(&mut buffer) {
        Ok(0) | Err(_) => *pipe = None,
        Ok(n) => into.extend_from_slice(&buffer[..n]),
    }
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
