//! Reaching other hosts: the system `ssh` and `scp`, with the user's own
//! configuration and keys. `BatchMode=yes` makes a missing key or an unknown
//! host key fail at once instead of asking: corobench never handles a
//! password. Every process started here is a [`Remote`], which kills and
//! reaps its local client when dropped, so none outlives the trial.

use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use corobench_spec::HostAddress;

/// How long connecting to a host may take.
const CONNECT_TIMEOUT_S: u32 = 10;
/// A silent connection is declared dead after this many keep-alives of
/// 5 s: the loss of a host is noticed within about 15 s, even when no
/// packet comes back to say so.
const ALIVE_COUNT: u32 = 3;
/// Bytes of a remote command's stderr kept to explain its failure.
const STDERR_KEPT: usize = 4096;
/// How often bounded waits look at the process.
const POLL: Duration = Duration::from_millis(20);

/// How commands reach a host. SSH is the one there is; the seam is here so
/// that another (a pod's `kubectl exec`) is a second implementation.
pub trait Transport: Sync {
    /// A command that runs `argv` on `host`.
    fn command(&self, host: &HostAddress, argv: &[String]) -> Command;
    /// A command that copies the local file `from` to `to` on `host`.
    fn copy(&self, from: &std::path::Path, host: &HostAddress, to: &str) -> Command;
}

/// The system `ssh`, with `-F FILE` when the spec names a config.
#[derive(Clone, Debug, Default)]
pub struct Ssh {
    pub config: Option<String>,
}

impl Transport for Ssh {
    fn command(&self, host: &HostAddress, argv: &[String]) -> Command {
        let mut command = Command::new("ssh");
        // No terminal: the remote command sees the connection's end as end
        // of file on stdin, which is what stops `corobench serve`.
        command.arg("-T");
        self.common(&mut command);
        if let Some(port) = host.port {
            command.arg("-p").arg(port.to_string());
        }
        if let Some(user) = &host.user {
            command.arg("-l").arg(user);
        }
        // The remote side joins the words with spaces and hands them to the
        // login shell, so each is quoted to arrive as one word.
        let line: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
        command.arg("--").arg(&host.host).arg(line.join(" "));
        command
    }

    fn copy(&self, from: &std::path::Path, host: &HostAddress, to: &str) -> Command {
        let mut command = Command::new("scp");
        command.arg("-q");
        self.common(&mut command);
        if let Some(port) = host.port {
            command.arg("-P").arg(port.to_string());
        }
        let user = host
            .user
            .as_ref()
            .map(|u| format!("{u}@"))
            .unwrap_or_default();
        let name = if host.host.contains(':') {
            format!("[{}]", host.host)
        } else {
            host.host.clone()
        };
        command
            .arg("--")
            .arg(from)
            .arg(format!("{user}{name}:{to}"));
        command
    }
}

impl Ssh {
    fn common(&self, command: &mut Command) {
        if let Some(config) = &self.config {
            command.arg("-F").arg(config);
        }
        for option in [
            "BatchMode=yes".to_string(),
            format!("ConnectTimeout={CONNECT_TIMEOUT_S}"),
            "ServerAliveInterval=5".to_string(),
            format!("ServerAliveCountMax={ALIVE_COUNT}"),
        ] {
            command.arg("-o").arg(option);
        }
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

    /// The last of what it wrote to stderr, trimmed.
    #[must_use]
    pub fn stderr_tail(&self) -> String {
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

/// Runs `command` to completion within `limit`: its stdout, or why not.
///
/// # Errors
/// It could not start, ran over `limit` (killed), or exited unsuccessfully.
pub fn run_bounded(command: Command, what: &str, limit: Duration) -> Result<String, String> {
    let mut remote = Remote::start(command, false).map_err(|e| format!("{what}: {e}"))?;
    let Some(status) = remote.wait_at_most(limit) else {
        return Err(format!(
            "{what} took longer than {} s and was stopped",
            limit.as_secs()
        ));
    };
    remote.finish_reading();
    let out = remote.drain_stdout().join("\n");
    if status.success() {
        Ok(out)
    } else {
        Err(format!(
            "{what} failed ({status}): {}",
            remote.stderr_tail()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_for_the_remote_shell() {
        assert_eq!(shell_quote("--cpus"), "--cpus");
        assert_eq!(shell_quote("0-1"), "0-1");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$(reboot)"), "'$(reboot)'");
    }

    #[test]
    fn ssh_command_line() {
        let host = corobench_spec::parse_address("ssh://bench@10.0.0.2:2222").unwrap();
        let command = Ssh::default().command(&host, &["echo".into(), "a b".into()]);
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(args.contains(&"BatchMode=yes".to_string()));
        assert_eq!(
            &args[args.len() - 7..],
            ["-p", "2222", "-l", "bench", "--", "10.0.0.2", "echo 'a b'"]
        );
    }
}
