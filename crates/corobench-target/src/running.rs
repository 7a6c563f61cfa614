//! A launched target: health wait (with port-clash retries), crash
//! detection, and a stop that leaves nothing behind.

use std::collections::BTreeSet;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use crate::cache::BuiltTarget;
use crate::error::TargetError;
use crate::group::{ProcessGroup, StopReport};
use crate::launch::{Resolved, free_port};
use crate::{health, procfs, tail};

/// A clash on an automatically picked port is retried this many times.
const MAX_PORT_RETRIES: u32 = 3;
/// Lines of stderr quoted in errors.
const ERROR_TAIL_LINES: usize = 20;
/// Pause between two health probes.
const HEALTH_POLL: Duration = Duration::from_millis(50);

/// A target process group started by [`BuiltTarget::launch`]. Dropping it
/// SIGKILLs the group and reaps it: no target outlives corobench.
#[derive(Debug)]
pub struct RunningTarget {
    built: BuiltTarget,
    resolved: Resolved,
    group: Option<ProcessGroup>,
    port: u16,
    port_picked: bool,
    port_retries: u32,
    owns_work_dir: bool,
}

impl RunningTarget {
    pub(crate) fn new(
        built: BuiltTarget,
        resolved: Resolved,
        group: ProcessGroup,
        port: u16,
        port_picked: bool,
        owns_work_dir: bool,
    ) -> Self {
        Self {
            built,
            resolved,
            group: Some(group),
            port,
            port_picked,
            port_retries: 0,
            owns_work_dir,
        }
    }

    fn group(&self) -> &ProcessGroup {
        self.group
            .as_ref()
            .expect("a running target has a group until it stops")
    }

    /// The target's first process.
    #[must_use]
    pub fn pid(&self) -> i32 {
        self.group().pid()
    }

    /// The target's process group (equal to [`RunningTarget::pid`]).
    #[must_use]
    pub fn pgid(&self) -> i32 {
        self.group().pid()
    }

    /// The process that kills the group should corobench die.
    #[must_use]
    pub fn guardian_pid(&self) -> i32 {
        self.group().guardian_pid()
    }

    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        // 0.0.0.0 takes connections on every address, loopback among them.
        let ip = self
            .resolved
            .listen
            .filter(|ip| !ip.is_unspecified())
            .unwrap_or(std::net::IpAddr::from([127, 0, 0, 1]));
        SocketAddr::new(ip, self.port)
    }

    /// What the target serves.
    #[must_use]
    pub fn protocol(&self) -> crate::Protocol {
        self.resolved.protocol
    }

    /// The certificates it serves with, when its protocol runs over TLS.
    #[must_use]
    pub fn tls(&self) -> Option<&crate::TlsFiles> {
        self.resolved.tls.as_ref()
    }

    #[must_use]
    pub fn work_dir(&self) -> &Path {
        &self.resolved.work_dir
    }

    #[must_use]
    pub fn name(&self) -> &str {
        &self.built.manifest.name
    }

    /// The signal that asks it to stop (SIGKILL follows after its timeout).
    #[must_use]
    pub fn stop_signal(&self) -> crate::StopSignal {
        self.built.manifest.run.stop_signal
    }

    /// Whether the target serves the HTTP contract (its `/stats` among
    /// it); a user's server does not, and is asked nothing of it.
    #[must_use]
    pub fn serves_contract(&self) -> bool {
        self.built.manifest.contract
    }

    /// The parameters the target runs with, defaults included.
    #[must_use]
    pub fn parameters(&self) -> &std::collections::BTreeMap<String, String> {
        &self.resolved.parameters
    }

    /// How many times a port clash made the target start again.
    #[must_use]
    pub fn port_retries(&self) -> u32 {
        self.port_retries
    }

    #[must_use]
    pub fn stderr_log(&self) -> PathBuf {
        self.resolved.work_dir.join("stderr.log")
    }

    #[must_use]
    pub fn stdout_log(&self) -> PathBuf {
        self.resolved.work_dir.join("stdout.log")
    }

    /// The last `lines` lines the target wrote to stderr.
    #[must_use]
    pub fn stderr_tail(&self, lines: usize) -> String {
        tail::last_lines(&self.stderr_log(), lines)
    }

    /// `Some` once the target's first process has exited (a crash, when it
    /// happens mid-trial). The process stays unreaped until the stop.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.group.as_ref().and_then(ProcessGroup::exit_status)
    }

    /// Polls `GET /healthz` until it answers 200. Fails at once when the
    /// target exits; a clash on a picked port starts it again on a new port
    /// (up to 3 times), each attempt with the full `timeout`.
    ///
    /// # Errors
    /// The target exited, its port was in use, or it stayed unhealthy for
    /// `timeout`; the error quotes the last lines of its stderr.
    pub fn wait_healthy(&mut self, timeout: Duration) -> Result<(), TargetError> {
        let mut deadline = Instant::now() + timeout;
        let mut elsewhere = Elsewhere::default();
        loop {
            let exited = self.exit_status();
            if exited.is_some() || self.stderr_reports_port_clash() {
                self.handle_failed_start(exited)?;
                deadline = Instant::now() + timeout;
                elsewhere = Elsewhere::default();
                continue;
            }
            let ready = &self.built.manifest.run.ready;
            let last_attempt = match health::ready(self.addr(), ready, &self.resolved.probe) {
                Ok(()) => return Ok(()),
                Err(why) => why,
            };
            if let Some(ports) = elsewhere.settled(self.listening_ports(), self.port) {
                return Err(TargetError::ListensElsewhere {
                    target: self.name().to_string(),
                    port: self.port,
                    listening: ports.into_iter().collect(),
                    stderr_tail: self.error_tail(),
                });
            }
            if Instant::now() >= deadline {
                // A server on [::1] alone is there, where 127.0.0.1 is not.
                let ipv6 = crate::procfs::ipv6_only(self.port).map(|note| format!("; {note}"));
                return Err(TargetError::Unhealthy {
                    target: self.name().to_string(),
                    port: self.port,
                    waited_for: format!(
                        "{} (last attempt: {last_attempt}{}",
                        self.built.manifest.run.ready,
                        ipv6.unwrap_or_default()
                    ),
                    timeout,
                    stderr_log: self.stderr_log(),
                    stderr_tail: self.error_tail(),
                });
            }
            std::thread::sleep(HEALTH_POLL);
        }
    }

    /// After an exit or a reported clash: starts again on a new port when the
    /// port was the problem and retries remain, else returns the error. A
    /// command that exited and left processes running daemonized: that is
    /// never a clash, even when what it left holds the port.
    fn handle_failed_start(&mut self, exited: Option<ExitStatus>) -> Result<(), TargetError> {
        if let Some(status) = exited
            && let Some(error) = self.daemonized(status)
        {
            return Err(error);
        }
        let clash =
            self.stderr_reports_port_clash() || (exited.is_some() && port_is_taken(self.port));
        if !clash {
            let status = exited.expect("a failed start without a clash is an exit");
            return Err(TargetError::Exited {
                target: self.name().to_string(),
                status,
                stderr_log: self.stderr_log(),
                stderr_tail: self.error_tail(),
            });
        }
        if !self.port_picked || self.port_retries >= MAX_PORT_RETRIES {
            return Err(TargetError::PortInUse {
                target: self.name().to_string(),
                port: self.port,
                retried: self.port_retries > 0,
            });
        }
        if let Some(mut group) = self.group.take() {
            group.stop(libc::SIGKILL, true, Duration::ZERO);
        }
        self.port = free_port()?;
        self.port_retries += 1;
        self.group = Some(self.built.spawn_group(&self.resolved, self.port)?);
        Ok(())
    }

    /// The TCP ports the target's live processes listen on now.
    fn listening_ports(&self) -> BTreeSet<u16> {
        procfs::listening_ports(&self.group().members())
    }

    /// The processes the target started that still run, its command
    /// having exited: it daemonized. Empty while the command runs.
    #[must_use]
    pub fn left_behind(&self) -> Vec<i32> {
        self.group
            .as_ref()
            .map_or_else(Vec::new, ProcessGroup::left_behind)
    }

    /// The error for a command that exited with `status` and left processes
    /// running, after stopping them; `None` when it left nothing.
    fn daemonized(&mut self, status: ExitStatus) -> Option<TargetError> {
        let pids = self.left_behind();
        if pids.is_empty() {
            return None;
        }
        let holds_port = self.listening_ports().contains(&self.port);
        let stderr_tail = self.error_tail();
        if let Some(group) = self.group.as_mut() {
            group.kill();
        }
        Some(TargetError::Daemonized {
            target: self.name().to_string(),
            status,
            pids,
            port: self.port,
            holds_port,
            stderr_tail,
        })
    }

    /// Where the target's cgroup is, if it has one.
    #[must_use]
    pub fn cgroup_dir(&self) -> Option<&Path> {
        self.group.as_ref().and_then(ProcessGroup::cgroup_dir)
    }

    /// The stderr tail as errors quote it.
    fn error_tail(&self) -> String {
        let tail = self.stderr_tail(ERROR_TAIL_LINES);
        if tail.trim().is_empty() {
            "(it wrote nothing)".to_string()
        } else {
            tail
        }
    }

    fn stderr_reports_port_clash(&self) -> bool {
        let text = self.stderr_tail(50).to_ascii_lowercase();
        ["address already in use", "address in use", "eaddrinuse"]
            .iter()
            .any(|needle| text.contains(needle))
    }

    /// The manifest's stop signal (SIGTERM unless it says otherwise) to the
    /// group, up to the manifest's `stop_timeout_s` for every
    /// process to end, then SIGKILL to what is left; everything is reaped.
    ///
    /// # Errors
    /// Processes that survived even SIGKILL (stuck in the kernel).
    pub fn stop(mut self) -> Result<StopReport, TargetError> {
        let timeout = self.built.manifest.run.stop_timeout();
        let Some(mut group) = self.group.take() else {
            unreachable!("only stop and drop take the group, and both consume the target");
        };
        group
            .stop(self.built.manifest.run.stop_signal.number(), true, timeout)
            .require_all_gone(&format!("target {}", self.name()))
    }
}

impl Drop for RunningTarget {
    fn drop(&mut self) {
        drop(self.group.take()); // SIGKILLs and reaps the group
        if self.owns_work_dir {
            let _ = std::fs::remove_dir_all(&self.resolved.work_dir);
        }
    }
}

/// How long a target may listen elsewhere, and not on its port, before it
/// counts as one that ignores the port it was given.
const ELSEWHERE_GRACE: Duration = Duration::from_secs(1);

/// Since when a starting target has listened on other ports but not its own.
#[derive(Debug, Default)]
struct Elsewhere {
    since: Option<Instant>,
}

impl Elsewhere {
    /// The ports it listens on instead, once it has done so for the grace
    /// period (a server may open an admin port before its own).
    fn settled(&mut self, listening: BTreeSet<u16>, port: u16) -> Option<BTreeSet<u16>> {
        if listening.is_empty() || listening.contains(&port) {
            self.since = None;
            return None;
        }
        let since = *self.since.get_or_insert_with(Instant::now);
        (since.elapsed() >= ELSEWHERE_GRACE).then_some(listening)
    }
}

/// Whether another process holds `port` on 127.0.0.1 now.
fn port_is_taken(port: u16) -> bool {
    matches!(TcpListener::bind(("127.0.0.1", port)), Err(e) if e.kind() == std::io::ErrorKind::AddrInUse)
}
