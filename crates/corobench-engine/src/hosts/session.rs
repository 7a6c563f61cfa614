//! `corobench serve` on the server host, over one session of the
//! transport (an SSH connection, a `kubectl exec`): its stdin is the
//! target's lifeline and takes the trial's orders; its stdout brings the
//! ready line, a resource sample a second and the answers. Closing stdin
//! stops the target.

use std::collections::BTreeMap;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use corobench_model::{ResourceSample, TrialFlag};
use corobench_sampler::ResourceSeries;

use super::asks::Asks;
use super::footprints::Footprints;
use super::{OnHosts, POLL, or_silent};
use crate::leak::{Footprint, Unreadable};
use crate::prepare::TrialEnvironment;
use crate::protocol::{self, Order, ServeEvent};
use crate::transport::Remote;
use crate::trial::{Halt, Server, ServerStopped, ServerToStart};

/// Building (when not cached), starting, checking and verifying a target
/// on the server host.
const SERVE_READY_LIMIT: Duration = Duration::from_secs(600);
/// Stopping the target once the session's stdin is closed.
const SERVE_STOP_LIMIT: Duration = Duration::from_secs(60);

/// `corobench serve` on the server host, over one session.
#[derive(Debug)]
pub struct ServerSession {
    remote: Remote,
    pub(super) host: String,
    pub(super) port: u16,
    /// The machine-speed probe `serve --probe` ran before the target started.
    pub(super) probe: Option<protocol::Probe>,
    /// Samples as `serve` printed them, with the server host's Unix ms.
    samples: Vec<(u64, ResourceSample)>,
    /// Answers to orders, not yet taken.
    answers: Vec<ServeEvent>,
    /// Its last line: how the target stopped.
    stopped: Option<protocol::Stopped>,
    pub(super) footprints: Footprints,
    /// The span of the trial's middle step in Unix ms by the server host's
    /// clock: the samples it keeps.
    pub(super) span_ms: (u64, u64),
}

impl OnHosts<'_> {
    /// Starts `corobench serve` of `server` and waits for its ready line.
    pub(super) fn start_session(&self, server: ServerToStart<'_>) -> Result<ServerSession, Halt> {
        let hosts = &self.hosts.hosts;
        let mut argv = vec![
            self.hosts.server_binary.clone(),
            "serve".into(),
            server.target.to_owned(),
            "--listen".into(),
            hosts.listen.clone(),
            "--sample-interval".into(),
            format!("{}ms", corobench_sampler::DEFAULT_INTERVAL.as_millis()),
        ];
        argv.extend(param_flags(server.parameters));
        let protocol = server.protocol;
        if !protocol.is_http1() {
            argv.extend(["--protocol".into(), protocol.name().into()]);
        }
        let certificates = protocol.tls.then(|| certificates(self.env)).transpose()?;
        if certificates.is_some() {
            argv.push("--tls-stdin".into());
        }
        argv.extend(self.probe_flag());
        if let Some(cpus) = &hosts.server_cpus {
            argv.extend(["--cpus".into(), cpus.clone()]);
        }
        if let Some(dir) = &hosts.targets_dir {
            argv.extend(["--targets-dir".into(), dir.clone()]);
        }
        let command = self.hosts.transport.command(&hosts.server, &argv);
        let mut remote = Remote::start(command, true).map_err(|e| self.cannot_start(&e))?;
        // A session that ended before taking them says why while it is
        // waited for.
        if let Some(certificates) = &certificates {
            let _ = write_line(&mut remote, &protocol::to_line(certificates));
        }
        let mut session = ServerSession::new(remote, hosts.server.text.clone());
        session.wait_ready(|| self.stopped())?;
        Ok(session)
    }
}

/// The text of the run's certificates, sent to the hosts of a trial over
/// TLS.
pub(super) fn certificates(env: &TrialEnvironment) -> Result<protocol::Certificates, Halt> {
    let files = env.tls.as_ref().ok_or_else(|| {
        Halt::Failed("a scenario speaks TLS, and the run made no certificates".to_owned())
    })?;
    protocol::Certificates::read(files).map_err(|e| {
        Halt::Failed(format!(
            "the run's certificates in {} could not be read: {e}",
            files.ca.parent().unwrap_or(&files.ca).display()
        ))
    })
}

/// Writes `line` and a newline on the stdin of `remote`; `false` when it
/// is closed.
pub(super) fn write_line(remote: &mut Remote, line: &str) -> bool {
    use std::io::Write as _;
    remote
        .stdin
        .as_mut()
        .is_some_and(|stdin| writeln!(stdin, "{line}").is_ok() && stdin.flush().is_ok())
}

/// `--param NAME=VALUE` for each parameter.
pub(super) fn param_flags(parameters: &BTreeMap<String, String>) -> Vec<String> {
    parameters
        .iter()
        .flat_map(|(name, value)| ["--param".to_owned(), format!("{name}={value}")])
        .collect()
}

impl ServerSession {
    /// A session of `serve` on `host`, before its ready line.
    fn new(remote: Remote, host: String) -> Self {
        Self {
            remote,
            host,
            port: 0,
            probe: None,
            samples: Vec::new(),
            answers: Vec::new(),
            stopped: None,
            footprints: Footprints::default(),
            span_ms: (0, 0),
        }
    }

    /// Reads lines until the ready line; fails if the session ends first.
    fn wait_ready(&mut self, stopped: impl Fn() -> bool) -> Result<(), Halt> {
        let deadline = Instant::now() + SERVE_READY_LIMIT;
        while Instant::now() < deadline {
            if stopped() {
                return Err(Halt::Interrupted);
            }
            match self.remote.lines.recv_timeout(POLL) {
                Ok(line) => match ServeEvent::parse(&line) {
                    Some(ServeEvent::Hello(hello)) => {
                        let peer = format!("corobench serve on {}", self.host);
                        if let Some(why) = hello.refusal(&peer) {
                            return Err(Halt::Failed(why));
                        }
                    }
                    Some(ServeEvent::Probe(probe)) => self.probe = Some(probe),
                    Some(ServeEvent::Ready(ready)) => {
                        self.port = ready.port;
                        return Ok(());
                    }
                    _ => {}
                },
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.remote.wait_at_most(Duration::from_secs(5));
                    return Err(Halt::Failed(format!(
                        "corobench serve on the server host {} ended before the target was ready ({}): {}",
                        self.host,
                        status.map_or_else(|| "still running".into(), |s| s.to_string()),
                        or_silent(&self.remote.stderr_tail())
                    )));
                }
            }
        }
        Err(Halt::Failed(format!(
            "the target on {} was not ready within {} s",
            self.host,
            SERVE_READY_LIMIT.as_secs()
        )))
    }

    /// Takes in what `serve` printed so far: samples and answers.
    pub(super) fn collect_samples(&mut self) {
        for line in self.remote.drain_stdout() {
            self.take_sample(&line);
        }
    }

    fn take_sample(&mut self, line: &str) {
        match ServeEvent::parse(line) {
            Some(ServeEvent::Sample(sample)) => {
                let unix_ms = u64::try_from(sample.unix_ms).unwrap_or(0);
                self.samples.push((unix_ms, sample.sample));
            }
            Some(answer @ (ServeEvent::Footprint(_) | ServeEvent::Counters(_))) => {
                self.answers.push(answer);
            }
            Some(ServeEvent::Stopped(stopped)) => self.stopped = Some(stopped),
            _ => {}
        }
    }

    /// Whether its session has ended, and how.
    pub(super) fn ended(&mut self) -> Option<std::process::ExitStatus> {
        self.remote.exited()
    }

    /// What `serve` wrote on stderr, or that it wrote nothing.
    pub(super) fn stderr(&self) -> String {
        or_silent(&self.remote.stderr_tail())
    }
}

impl Server for ServerSession {
    fn host(&self) -> &str {
        &self.host
    }

    fn footprint(&mut self) -> Result<Footprint, Unreadable> {
        let mut footprints = std::mem::take(&mut self.footprints);
        let footprint = footprints.now(self);
        self.footprints = footprints;
        footprint
    }

    fn is_gone(&mut self) -> bool {
        self.ended().is_some()
    }

    fn explain(&mut self, why: &str) -> String {
        format!("{why} (on {}): {}", self.host, self.stderr())
    }

    fn attached_url(&self) -> Option<&str> {
        None
    }

    /// Closes the lifeline, waits for the target to stop, and keeps the
    /// samples taken inside the middle step's span (a sample covers the
    /// interval before it: the first one ending inside the span is the
    /// first to belong to it).
    fn stop(mut self) -> ServerStopped {
        self.remote.close_stdin();
        let status = self.remote.wait_at_most(SERVE_STOP_LIMIT);
        self.remote.finish_reading();
        self.collect_samples();
        let leak = (!status.is_some_and(|s| s.success())).then(|| TrialFlag::Leak {
            what: format!(
                "corobench serve on {} did not stop cleanly ({}): {}",
                self.host,
                status.map_or_else(|| "killed after waiting".into(), |s| s.to_string()),
                self.stderr()
            ),
        });
        // A target that ignored its stop signal, as `serve` reported it.
        let killed = self
            .stopped
            .as_ref()
            .and_then(|s| s.killed_at_stop.as_ref());
        let flag = leak.or_else(|| killed.map(protocol::KilledAtStop::flag));
        let interval_ms = super::duration_ms(corobench_sampler::DEFAULT_INTERVAL.as_secs_f64());
        let (start_ms, end_ms) = self.span_ms;
        let samples: Vec<ResourceSample> = self
            .samples
            .into_iter()
            .filter(|(at, _)| *at > start_ms && *at <= end_ms + interval_ms / 2)
            .map(|(_, sample)| sample)
            .collect();
        ServerStopped {
            series: Some(ResourceSeries {
                summary: corobench_sampler::summarize(&samples),
                samples,
                target_vanished: false,
            }),
            flag,
        }
    }
}

impl Asks for ServerSession {
    fn send(&mut self, order: &Order) -> bool {
        write_line(&mut self.remote, &protocol::to_line(order))
    }

    fn answer(
        &mut self,
        wanted: &dyn Fn(&ServeEvent) -> bool,
        limit: Duration,
    ) -> Option<ServeEvent> {
        let deadline = Instant::now() + limit;
        loop {
            self.collect_samples();
            if let Some(at) = self.answers.iter().position(wanted) {
                return Some(self.answers.swap_remove(at));
            }
            if Instant::now() >= deadline || self.remote.exited().is_some() {
                return None;
            }
            std::thread::sleep(POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session whose `serve` is a script: it prints `line` once its
    /// stdin (the lifeline) closes, and exits 0.
    fn scripted(line: &str) -> ServerSession {
        let mut command = std::process::Command::new("sh");
        let script = format!(
            "cat >/dev/null; printf '%s\\n' {}",
            crate::transport::shell_quote(line)
        );
        command.args(["-c", &script]);
        ServerSession::new(Remote::start(command, true).unwrap(), "ssh://s".into())
    }

    #[test]
    fn a_target_killed_at_its_stop_on_the_server_host_flags_the_trial() {
        let stopped = protocol::killed_at_stop_line();
        let flag = Server::stop(scripted(&stopped.line())).flag;
        assert_eq!(
            flag,
            Some(TrialFlag::KilledAtStop {
                signal: "SIGTERM".into(),
                waited_s: 5.02,
            })
        );
    }

    #[test]
    fn a_clean_stop_and_an_older_serve_s_line_flag_nothing() {
        // An older `serve` says it needed SIGKILL, but not which signal
        // the target ignored nor for how long: no flag is made up.
        let older = r#"{"event":"stopped","reason":"stdin closed","exit_status":null,"needed_sigkill":true,"unix_ms":1}"#;
        assert_eq!(Server::stop(scripted(older)).flag, None);
        let clean = older.replace("true", "false");
        assert_eq!(Server::stop(scripted(&clean)).flag, None);
    }
}
