//! `kubectl`, run as the user runs it (their kubeconfig, their context,
//! their credentials): corobench holds no cluster credentials of its own.
//!
//! Every call has a time limit and ends at the user's Ctrl-C: a kubectl
//! that hangs (an API server that never answers, a `delete --wait` that
//! never ends) is killed, and the run goes on to its clean-up, which has
//! time limits of its own.

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::transport;

/// How long `kubectl cluster-info` may take to say whether the API server answers.
const REACHABLE_TIMEOUT: &str = "10s";
/// How long a call that only reads configuration may take.
const LOCAL_CALL: Duration = Duration::from_secs(15);
/// How long a call to the API server may take (`apply`, `get`,
/// `cluster-info`): kubectl's own request timeout is shorter.
const API_CALL: Duration = Duration::from_secs(60);
/// How long deleting the run's objects, and waiting until they are gone,
/// may take: pods get 30 s to stop by default.
pub const DELETE_CALL: Duration = Duration::from_secs(180);

/// One kubectl context and namespace, and the container commands run in.
#[derive(Debug)]
pub struct Kubectl {
    transport: transport::Kubectl,
    /// The user's Ctrl-C: a call in progress ends when it is set.
    stop: Arc<AtomicBool>,
}

impl Kubectl {
    #[must_use]
    pub fn new(
        context: Option<String>,
        namespace: String,
        container: &str,
        stop: Arc<AtomicBool>,
    ) -> Self {
        Self {
            transport: transport::Kubectl {
                context,
                namespace,
                container: container.to_string(),
            },
            stop,
        }
    }

    /// The transport that runs commands in this namespace's pods.
    #[must_use]
    pub fn transport(&self) -> transport::Kubectl {
        self.transport.clone()
    }

    /// The context kubectl will use, by name, for messages.
    #[must_use]
    pub fn context_name(&self) -> String {
        if let Some(context) = &self.transport.context {
            return context.clone();
        }
        let mut command = Command::new("kubectl");
        command.args(["config", "current-context"]);
        match self.bounded(command, None, LOCAL_CALL, true) {
            Ok(out) if out.success => out.stdout.trim().to_string(),
            _ => "(none: kubectl has no current context)".to_string(),
        }
    }

    /// Fails unless the context's API server answers.
    ///
    /// # Errors
    /// [`KubectlError::NotInstalled`], or [`KubectlError::Unreachable`]
    /// naming the context tried.
    pub fn check_reachable(&self) -> Result<(), KubectlError> {
        let context = self.context_name();
        let command = self.command(&["cluster-info", "--request-timeout", REACHABLE_TIMEOUT]);
        let output = self
            .bounded(command, None, API_CALL, true)
            .map_err(|e| match e {
                Ended::NotRun(error) => KubectlError::NotInstalled { error },
                other => other.into_error("kubectl cluster-info"),
            })?;
        if output.success {
            return Ok(());
        }
        let said = output
            .stderr
            .lines()
            .rfind(|line| !line.trim().is_empty())
            .unwrap_or("(kubectl said nothing)")
            .to_owned();
        Err(KubectlError::Unreachable { context, said })
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = self.transport.base();
        command.args(args);
        command
    }

    /// Runs kubectl with `args` (and `stdin`, if any) and returns its stdout.
    ///
    /// # Errors
    /// kubectl could not run, failed, outlived its time limit or was
    /// interrupted; [`KubectlError::Failed`] carries its stderr.
    pub fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> Result<String, KubectlError> {
        self.run_within(args, stdin, API_CALL, true)
    }

    /// [`Kubectl::run`] with `limit`; `interruptible`: the user's Ctrl-C
    /// ends it too (not for the clean-up that follows one).
    ///
    /// # Errors
    /// As [`Kubectl::run`].
    pub fn run_within(
        &self,
        args: &[&str],
        stdin: Option<&[u8]>,
        limit: Duration,
        interruptible: bool,
    ) -> Result<String, KubectlError> {
        let shown = format!("kubectl {}", args.join(" "));
        let output = self
            .bounded(self.command(args), stdin, limit, interruptible)
            .map_err(|e| e.into_error(&shown))?;
        if !output.success {
            return Err(KubectlError::Failed {
                shown,
                status: output.status,
                stderr: output.stderr.trim().to_owned(),
            });
        }
        Ok(output.stdout)
    }

    /// Runs `command` in its own process group until it ends, `limit`
    /// passes or (`interruptible`) the user stops the run; then kills it.
    fn bounded(
        &self,
        mut command: Command,
        stdin: Option<&[u8]>,
        limit: Duration,
        interruptible: bool,
    ) -> Result<Finished, Ended> {
        command
            .process_group(0)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(Ended::NotRun)?;
        let input = stdin.map(<[u8]>::to_vec);
        let writer = child.stdin.take().map(|mut pipe| {
            std::thread::spawn(move || {
                let _ = pipe.write_all(input.as_deref().unwrap_or_default());
            })
        });
        let readers = [
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
        ]
        .map(|pipe| {
            std::thread::spawn(move || {
                let mut text = String::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_string(&mut text);
                }
                text
            })
        });
        let deadline = Instant::now() + limit;
        let ended = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) => {}
                Err(e) => break Err(Ended::NotRun(e)),
            }
            let stopped = interruptible && self.stop.load(Ordering::Relaxed);
            if stopped || Instant::now() >= deadline {
                if let Ok(pid) = i32::try_from(child.id()) {
                    // SAFETY: the child is unreaped, so its pid (its group
                    // id) is still ours.
                    unsafe { libc::kill(-pid, libc::SIGKILL) };
                }
                let _ = child.wait();
                break Err(if stopped {
                    Ended::Interrupted
                } else {
                    Ended::TimedOut(limit)
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        let [stdout, stderr] = readers.map(|r| r.join().unwrap_or_default());
        let status = ended?;
        Ok(Finished {
            success: status.success(),
            status,
            stdout,
            stderr,
        })
    }

    /// `kubectl apply -f -` of one object or List.
    ///
    /// # Errors
    /// As [`Self::run`].
    pub fn apply(&self, objects: &Value) -> Result<(), KubectlError> {
        self.run(&["apply", "-f", "-"], Some(objects.to_string().as_bytes()))
            .map(drop)
    }

    /// `kubectl get … -o json`, parsed.
    ///
    /// # Errors
    /// As [`Self::run`], or output that is not JSON.
    pub fn get_json(&self, args: &[&str]) -> Result<Value, KubectlError> {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        let text = self.run(&all, None)?;
        serde_json::from_str(&text).map_err(|error| KubectlError::NoJson {
            shown: format!("kubectl {}", all.join(" ")),
            error,
        })
    }
}

/// A kubectl call that ran to its end.
#[derive(Debug)]
struct Finished {
    success: bool,
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

/// Why a kubectl call did not run to its end.
#[derive(Debug)]
enum Ended {
    NotRun(std::io::Error),
    TimedOut(Duration),
    Interrupted,
}

impl Ended {
    fn into_error(self, shown: &str) -> KubectlError {
        let shown = shown.to_owned();
        match self {
            Self::NotRun(error) => KubectlError::NotRun { shown, error },
            Self::TimedOut(limit) => KubectlError::TimedOut { shown, limit },
            Self::Interrupted => KubectlError::Interrupted { shown },
        }
    }
}

/// Why a kubectl call failed. `shown` is the call as the user would type it.
#[derive(Debug, thiserror::Error)]
pub enum KubectlError {
    /// kubectl could not be started at all, checking the cluster.
    #[error("cannot run kubectl ({error}): install it and make sure it is on PATH")]
    NotInstalled { error: std::io::Error },
    /// A later call could not be started.
    #[error("cannot run {shown}: {error}")]
    NotRun {
        shown: String,
        error: std::io::Error,
    },
    /// The context's API server does not answer; `said` is kubectl's last
    /// line on stderr.
    #[error(
        "no Kubernetes cluster reachable through kubectl context {context:?}: \
         `kubectl cluster-info` failed: {said}"
    )]
    Unreachable { context: String, said: String },
    /// kubectl ended with a failing status.
    #[error("{shown} failed ({status}): {stderr}")]
    Failed {
        shown: String,
        status: std::process::ExitStatus,
        stderr: String,
    },
    /// kubectl outlived its time limit and was killed.
    #[error(
        "{shown} did not finish within {} s and was killed: the cluster's API server \
         does not answer, or kubectl waits for something that does not happen",
        .limit.as_secs()
    )]
    TimedOut { shown: String, limit: Duration },
    /// The user stopped the run while kubectl ran.
    #[error("interrupted while {shown} ran")]
    Interrupted { shown: String },
    /// `kubectl get -o json` printed something else.
    #[error("{shown} printed no JSON: {error}")]
    NoJson {
        shown: String,
        error: serde_json::Error,
    },
}
