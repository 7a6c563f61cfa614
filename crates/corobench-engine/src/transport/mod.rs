//! How commands reach another host, behind one trait: [`ssh::Ssh`] (the
//! system `ssh` and `scp`), [`kubectl::Kubectl`] (`kubectl exec` into a
//! pod) and [`local::Local`] (this machine's shell). Trials on hosts
//! ([`crate::hosts::OnHosts`]) and the host checks speak only [`Transport`]. Every process started
//! here is a [`Remote`], which kills and reaps its local client when
//! dropped, so none outlives the trial.

pub mod kubectl;
pub mod local;
pub mod ssh;

pub use kubectl::Kubectl;
pub use local::Local;
pub use ssh::Ssh;

use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use corobench_spec::HostAddress;

/// Bytes of a remote command's stderr kept to explain its failure.
const STDERR_KEPT: usize = 4096;
/// How long a failure's explanation waits for the rest of a client's output.
const OUTPUT_SETTLE: Duration = Duration::from_secs(1);
/// How often bounded waits look at the process.
const POLL: Duration = Duration::from_millis(20);

/// How commands reach a host: the place of trials on hosts holds one of
/// these and never asks which it is.
pub trait Transport: Sync + Send + std::fmt::Debug {
    /// A command that runs `argv` on `host`; its stdin, when kept open,
    /// reaches the remote command, and its end is the remote end of file.
    fn command(&self, host: &HostAddress, argv: &[String]) -> Command;
    /// A command that copies the local file `from` to `to` on `host`.
    fn copy(&self, from: &std::path::Path, host: &HostAddress, to: &str) -> Command;
    /// The local program that reaches hosts, for messages (`ssh`, `kubectl`).
    fn client(&self) -> &'static str;
    /// How the user can check by hand that `host` is reachable this way.
    fn check_hint(&self, host: &HostAddress) -> String;
    /// Whether corobench made the hosts itself (pods) rather than the spec
    /// naming them: a host that fails is then a failed environment, not a
    /// spec to change.
    fn made_the_hosts(&self) -> bool {
        false
    }
}

/// `'text'` for a POSIX shell, unquoted when nothing in it is special.
#[must_use]
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// A command running on another host through a local client process.
#[derive(Debug)]
pub struct Remote {
    child: Child,
    /// Open while the remote command should run (the lifeline of `serve`).
    pub stdin: Option<ChildStdin>,
    /// Stdout, one line at a time, as it comes.
    pub lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
}

impl Remote {
    /// Starts `command`; `keep_stdin` holds its stdin open until
    /// [`Remote::close_stdin`] or drop.
    ///
    /// # Errors
    /// The client program could not start (`ssh` missing).
    pub fn start(mut command: Command, keep_stdin: bool) -> std::io::Result<Self> {
        command
            .stdin(if keep_stdin {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: Ctrl-C in the terminal reaches corobench,
            // which ends the trial itself, not the client behind its back.
            .process_group(0);
        let mut child = command.spawn()?;
        let (sender, lines) = mpsc::channel();
        let mut readers = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if sender.send(line).is_err() {
                        return;
                    }
                }
            }));
        }
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(pipe) = child.stderr.take() {
            let kept = Arc::clone(&stderr);
            readers.push(std::thread::spawn(move || keep_tail(pipe, &kept)));
        }
        Ok(Self {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            readers,
        })
    }

    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status, if the client has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Ends the session's stdin: the remote command reads end of file.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Waits up to `limit` for the client to exit; kills it after that.
    pub fn wait_at_most(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            std::thread::sleep(POLL);
        }
        self.kill();
        None
    }

    /// SIGKILLs the local client and reaps it; the remote side sees the
    /// connection close.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The last of what it wrote to stderr, trimmed. What a client that
    /// has just exited wrote may still be in the pipe: the readers get up to
    /// [`OUTPUT_SETTLE`] to reach its end, or the reason would be lost.
    #[must_use]
    pub fn stderr_tail(&self) -> String {
        let deadline = Instant::now() + OUTPUT_SETTLE;
        while self.readers.iter().any(|r| !r.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        self.stderr
            .lock()
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }

    /// Everything written to stdout so far and until it closes (after exit).
    pub fn drain_stdout(&mut self) -> Vec<String> {
        self.lines.try_iter().collect()
    }

    /// Joins the reader threads once the client has exited, so that its
    /// whole output has been read.
    pub fn finish_reading(&mut self) {
        if self.exited().is_some() {
            for reader in self.readers.drain(..) {
                let _ = reader.join();
            }
        }
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        self.close_stdin();
        if self.exited().is_none() {
            self.kill();
        }
    }
}

fn keep_tail(mut pipe: impl std::io::Read, kept: &Mutex<String>) {
    let mut buffer = [0_u8; 1024];
    loop {
        match pipe.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if let Ok(mut text) = kept.lock() {
                    text.push_str(&String::from_utf8_lossy(&buffer[..n]));
                    if text.len() > STDERR_KEPT {
                        let cut = text.len() - STDERR_KEPT;
                        let cut = (cut..text.len())
                            .find(|i| text.is_char_boundary(*i))
                            .unwrap_or(text.len());
                        text.drain(..cut);
                    }
                }
            }
        }
    }
}

/// Why a command run to completion gave no output; `what` says what it did.
#[derive(Debug, thiserror::Error)]
pub enum BoundedError {
    #[error("{what}: {source}")]
    Start {
        what: String,
        source: std::io::Error,
    },
    #[error("{what} took longer than {limit_s} s and was stopped")]
    TooLong { what: String, limit_s: u64 },
    #[error("{what} failed ({status}): {stderr}")]
    Failed {
        what: String,
        status: ExitStatus,
        stderr: String,
    },
}

/// Runs `command` to completion within `limit`: its stdout, or why not.
///
/// # Errors
/// It could not start, ran over `limit` (killed), or exited unsuccessfully.
pub fn run_bounded(command: Command, what: &str, limit: Duration) -> Result<String, BoundedError> {
    let what = what.to_owned();
    let mut remote = match Remote::start(command, false) {
        Ok(remote) => remote,
        Err(source) => return Err(BoundedError::Start { what, source }),
    };
    let Some(status) = remote.wait_at_most(limit) else {
        return Err(BoundedError::TooLong {
            what,
            limit_s: limit.as_secs(),
        });
    };
    remote.finish_reading();
    let out = remote.drain_stdout().join("\n");
    if status.success() {
        Ok(out)
    } else {
        Err(BoundedError::Failed {
            what,
            status,
            stderr: remote.stderr_tail(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trial failed with "it wrote nothing to stderr" when the reason was
    /// still in the pipe as the client exited.
    #[test]
    fn stderr_written_as_the_client_exits_is_kept() {
        let mut command = Command::new("sh");
        command.args(["-c", "(sleep 0.1; echo 'the reason' >&2) & exit 1"]);
        let mut remote = Remote::start(command, false).unwrap();
        assert!(remote.wait_at_most(Duration::from_secs(10)).is_some());
        assert_eq!(remote.stderr_tail(), "the reason");
    }

    #[test]
    fn quotes_for_the_remote_shell() {
        assert_eq!(shell_quote("--cpus"), "--cpus");
        assert_eq!(shell_quote("0-1"), "0-1");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$(reboot)"), "'$(reboot)'");
    }
}
