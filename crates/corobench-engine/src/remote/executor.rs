//! One trial on other hosts: `corobench serve` on the server host, held by
//! its SSH session's stdin; `corobench load --json --start-at T` on every
//! generator host, each measuring the same wall-clock window; their reports
//! merged exactly; resources from the samples `serve` streams. Closing the
//! session's stdin stops the target; any local client (`ssh`, `kubectl`)
//! still running when the trial ends is killed and reaped
//! ([`super::transport::Remote`]). The hosts are reached through whatever
//! [`super::transport::Transport`] they were made ready with.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use corobench_model::{
    LoadReport, MachineProbe, PoolWindow, ResourceSample, TaskCounts, TrialCounters, TrialFlag,
    TrialRecord,
};
use corobench_spec::{HostAddress, PlannedScenario};

use super::counters;
use super::leak_check::RemoteLeakCheck;
use super::load_args;
use super::protocol::{self, Order, ServeEvent};
use super::serve_asks::Asks;
use super::transport::Remote;
use crate::hosts::ReadyHosts;
use crate::trial::{blank_record, failed};
use crate::{
    Phase, RunEvent, RunObserver, TrialEnvironment, TrialExecutor, TrialOutcome, TrialSlot,
};

/// Building (when not cached), starting, checking and verifying a target
/// on the server host.
const SERVE_READY_LIMIT: Duration = Duration::from_secs(600);
/// From now to the start of the window, beyond the warm-up: every
/// generator must connect over SSH, start, and reach the server by then.
const START_LEAD: Duration = Duration::from_secs(3);
/// After its window should have ended, how long a generator may take to
/// finish and report.
const GENERATOR_SLACK: Duration = Duration::from_secs(30);
/// Stopping the target once the session's stdin is closed.
const SERVE_STOP_LIMIT: Duration = Duration::from_secs(60);
/// How often the trial looks at its sessions.
const POLL: Duration = Duration::from_millis(50);

/// Trials whose server and generators run on the `[hosts]` of the spec.
#[derive(Debug)]
pub struct RemoteTrials<'a> {
    pub env: &'a TrialEnvironment,
    pub hosts: &'a ReadyHosts,
}

/// Why a trial ended early.
pub(super) enum Ended {
    Interrupted,
    Failed(String),
}

impl TrialExecutor for RemoteTrials<'_> {
    fn run_trial(
        &self,
        scenario: &PlannedScenario,
        slot: TrialSlot,
        sequence: u32,
        observer: &dyn RunObserver,
    ) -> TrialOutcome {
        if scenario.program.is_some() {
            return super::program::run(self, scenario, blank_record(slot, sequence));
        }
        let blank = blank_record(slot, sequence);
        match self.measure(scenario, observer) {
            Ok(measured) => TrialOutcome::Ended(Box::new(measured.into_record(blank))),
            Err(Ended::Interrupted) => TrialOutcome::Interrupted,
            Err(Ended::Failed(why)) => failed(blank, why),
        }
    }
}

/// What a remote trial measured.
struct Measured {
    load: LoadReport,
    samples: Vec<ResourceSample>,
    flags: Vec<TrialFlag>,
    tasks: TaskCounts,
    pool: Option<PoolWindow>,
    counters: TrialCounters,
    probe: Option<MachineProbe>,
}

impl Measured {
    fn into_record(self, mut trial: TrialRecord) -> TrialRecord {
        trial.flags = TrialFlag::of_load(&self.load);
        trial.flags.extend(self.flags);
        trial.resources = Some(corobench_sampler::summarize(&self.samples));
        trial.resource_series = self.samples;
        trial.tasks = self.tasks;
        trial.pool = self.pool;
        trial.counters = Some(self.counters);
        trial.probe = self.probe;
        trial.load = Some(self.load);
        trial
    }
}

impl RemoteTrials<'_> {
    fn measure(
        &self,
        scenario: &PlannedScenario,
        observer: &dyn RunObserver,
    ) -> Result<Measured, Ended> {
        observer.on(RunEvent::TrialPhase(Phase::Starting));
        let mut server = self.start_server(&scenario.target, &scenario.parameters)?;
        let host = server.host.clone();
        let mut leak_check = RemoteLeakCheck::before(&mut server, &host);
        let start_at = start_instant(scenario);
        let window = scenario.measurement.duration;
        leak_check.order_peak(&mut server, halfway_unix_ms(start_at, window));
        let count_from = counters::order(&mut server, start_at, window);
        let mut generators = self.start_generators(scenario, server.port, start_at)?;
        observer.on(RunEvent::TrialPhase(Phase::WarmingUp));
        let deadline = Instant::now()
            + until(start_at)
            + scenario.measurement.duration
            + scenario.measurement.timeout
            + GENERATOR_SLACK;
        self.wait_generators(&mut server, &mut generators, deadline)?;
        observer.on(RunEvent::TrialPhase(Phase::Stopping));
        let (load, generator_counters) = merge_reports(&mut generators)?;
        drop(generators);
        let counters = counters::collect(&mut server, &host, count_from, &generator_counters);
        let probe = self.env.machine_probe.then(|| {
            super::probe::joined(server.probe.take(), load.probe_mb_per_s, &host)
                .map_err(|why| observer.notice(&format!("machine-speed probe skipped: {why}")))
                .ok()
        });
        crate::window::sleep_unless_stopped(&self.env.stop, scenario.measurement.idle);
        if self.stopped() {
            return Err(Ended::Interrupted);
        }
        let settled = leak_check.settle(&mut server);
        let mut flags = Vec::new();
        let samples = server.finish(window_ms(&load), &mut flags);
        let (tasks, leaks, skipped) = settled.verdict(&samples);
        flags.extend(leaks);
        if let Some(why) = skipped {
            observer.notice(&why);
        }
        Ok(Measured {
            load,
            samples,
            flags,
            tasks,
            pool: settled.pool(),
            counters,
            probe: probe.flatten(),
        })
    }

    fn cannot_start(&self, error: &std::io::Error) -> Ended {
        Ended::Failed(format!(
            "cannot run {}: {error}",
            self.hosts.transport.client()
        ))
    }

    pub(super) fn stopped(&self) -> bool {
        self.env.stop.load(Ordering::Relaxed)
    }

    /// Starts `corobench serve` of `target` and waits for its ready line.
    pub(super) fn start_server(
        &self,
        target: &str,
        parameters: &BTreeMap<String, String>,
    ) -> Result<ServerSession, Ended> {
        let hosts = &self.hosts.hosts;
        let mut argv = vec![
            self.hosts.server_binary.clone(),
            "serve".into(),
            target.to_owned(),
            "--listen".into(),
            hosts.listen.clone(),
            "--sample-interval".into(),
            format!("{}ms", corobench_sampler::DEFAULT_INTERVAL.as_millis()),
        ];
        argv.extend(param_flags(parameters));
        argv.extend(self.probe_flag());
        if let Some(cpus) = &hosts.server_cpus {
            argv.extend(["--cpus".into(), cpus.clone()]);
        }
        if let Some(dir) = &hosts.targets_dir {
            argv.extend(["--targets-dir".into(), dir.clone()]);
        }
        let command = self.hosts.transport.command(&hosts.server, &argv);
        let remote = Remote::start(command, true).map_err(|e| self.cannot_start(&e))?;
        let mut session = ServerSession {
            remote,
            host: hosts.server.text.clone(),
            port: 0,
            probe: None,
            samples: Vec::new(),
            answers: Vec::new(),
        };
        session.wait_ready(|| self.stopped())?;
        Ok(session)
    }

    /// Starts `corobench load` on every generator host, each with its share.
    fn start_generators(
        &self,
        scenario: &PlannedScenario,
        port: u16,
        start_at: SystemTime,
    ) -> Result<Vec<Generator>, Ended> {
        let hosts = &self.hosts.hosts;
        let count = hosts.generators.len();
        let url = server_url(&hosts.server_address, port, &scenario.workload.path);
        let mut generators = Vec::with_capacity(count);
        for (i, host) in hosts.generators.iter().enumerate() {
            let mut argv = vec![self.hosts.generator_binaries[i].clone(), "load".into()];
            argv.push("--json".into());
            let share = load_args::share(scenario, i, count);
            argv.extend(load_args::load_args(
                scenario,
                share,
                self.env.backend.name(),
            ));
            argv.extend(self.body_flags(scenario)?);
            argv.extend(self.probe_flag());
            if let Some(cpus) = &hosts.generator_cpus[i] {
                argv.extend(["--cpus".into(), cpus.clone()]);
            }
            argv.extend(["--start-at".into(), unix_seconds(start_at)]);
            argv.push(url.clone());
            let command = self.hosts.transport.command(host, &argv);
            let remote = Remote::start(command, false).map_err(|e| self.cannot_start(&e))?;
            generators.push(Generator {
                host: host.clone(),
                remote,
            });
        }
        Ok(generators)
    }

    /// `--probe`, when the run probes the machine's speed before each trial.
    fn probe_flag(&self) -> Option<String> {
        self.env.machine_probe.then(|| "--probe".to_owned())
    }

    /// The request body as a flag: text travels on the command line.
    fn body_flags(&self, scenario: &PlannedScenario) -> Result<Vec<String>, Ended> {
        let Some(body) = self.env.bodies.get(&scenario.workload.name) else {
            return Ok(Vec::new());
        };
        match std::str::from_utf8(body) {
            Ok(text) if !text.contains('\0') => Ok(vec!["--body".into(), text.to_string()]),
            _ => Err(Ended::Failed(format!(
                "workload {} has a binary body, which is not sent to generator hosts yet; \
                 use a text body with [hosts]",
                scenario.workload.name
            ))),
        }
    }

    /// Waits until every generator has reported, watching the server's
    /// session: its end is the loss of the server host.
    fn wait_generators(
        &self,
        server: &mut ServerSession,
        generators: &mut [Generator],
        deadline: Instant,
    ) -> Result<(), Ended> {
        loop {
            server.collect_samples();
            if self.stopped() {
                return Err(Ended::Interrupted);
            }
            if let Some(status) = server.remote.exited() {
                return Err(Ended::Failed(format!(
                    "the session with the server host {} ended during the trial ({status}); \
                     the trial is lost: {}",
                    server.host,
                    or_silent(&server.remote.stderr_tail())
                )));
            }
            let mut running = 0;
            for generator in generators.iter_mut() {
                match generator.remote.exited() {
                    None => running += 1,
                    Some(status) if status.success() => {}
                    Some(status) => return Err(generator.failure(&status.to_string())),
                }
            }
            if running == 0 {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let late = generators
                    .iter_mut()
                    .find_map(|g| g.remote.exited().is_none().then_some(g));
                let why = "it had not reported long after its window should have ended";
                return Err(late.map_or_else(|| Ended::Failed(why.into()), |g| g.failure(why)));
            }
            std::thread::sleep(POLL);
        }
    }
}

/// `corobench serve` on the server host, over one SSH session.
pub(super) struct ServerSession {
    remote: Remote,
    pub(super) host: String,
    pub(super) port: u16,
    /// The machine-speed probe `serve --probe` ran before the target started.
    probe: Option<protocol::Probe>,
    /// Samples as `serve` printed them, with the server host's Unix ms.
    samples: Vec<(u64, ResourceSample)>,
    /// Answers to orders, not yet taken.
    answers: Vec<ServeEvent>,
}

impl ServerSession {
    /// Reads lines until the ready line; fails if the session ends first.
    fn wait_ready(&mut self, stopped: impl Fn() -> bool) -> Result<(), Ended> {
        let deadline = Instant::now() + SERVE_READY_LIMIT;
        while Instant::now() < deadline {
            if stopped() {
                return Err(Ended::Interrupted);
            }
            match self.remote.lines.recv_timeout(POLL) {
                Ok(line) => match ServeEvent::parse(&line) {
                    Some(ServeEvent::Hello(hello)) => {
                        let peer = format!("corobench serve on {}", self.host);
                        if let Some(why) = hello.refusal(&peer) {
                            return Err(Ended::Failed(why));
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
                    return Err(Ended::Failed(format!(
                        "corobench serve on the server host {} ended before the target was ready ({}): {}",
                        self.host,
                        status.map_or_else(|| "still running".into(), |s| s.to_string()),
                        or_silent(&self.remote.stderr_tail())
                    )));
                }
            }
        }
        Err(Ended::Failed(format!(
            "the target on {} was not ready within {} s",
            self.host,
            SERVE_READY_LIMIT.as_secs()
        )))
    }

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
            _ => {}
        }
    }

    /// Whether its session has ended.
    pub(super) fn ended(&mut self) -> bool {
        self.remote.exited().is_some()
    }

    /// Closes the lifeline, waits for the target to stop, and keeps the
    /// samples taken inside `(start_ms, end_ms)` (Unix ms, by the server
    /// host's clock).
    pub(super) fn finish(
        mut self,
        (start_ms, end_ms): (u64, u64),
        flags: &mut Vec<TrialFlag>,
    ) -> Vec<ResourceSample> {
        self.remote.close_stdin();
        let status = self.remote.wait_at_most(SERVE_STOP_LIMIT);
        self.remote.finish_reading();
        self.collect_samples();
        if !status.is_some_and(|s| s.success()) {
            flags.push(TrialFlag::Leak {
                what: format!(
                    "corobench serve on {} did not stop cleanly ({}): {}",
                    self.host,
                    status.map_or_else(|| "killed after waiting".into(), |s| s.to_string()),
                    or_silent(&self.remote.stderr_tail())
                ),
            });
        }
        let interval_ms = duration_ms(corobench_sampler::DEFAULT_INTERVAL.as_secs_f64());
        // A sample covers the interval before it: the first one ending
        // inside the window is the first to belong to it.
        self.samples
            .into_iter()
            .filter(|(at, _)| *at > start_ms && *at <= end_ms + interval_ms / 2)
            .map(|(_, sample)| sample)
            .collect()
    }
}

impl Asks for ServerSession {
    fn send(&mut self, order: &Order) -> bool {
        use std::io::Write as _;
        self.remote.stdin.as_mut().is_some_and(|stdin| {
            writeln!(stdin, "{}", protocol::to_line(order)).is_ok() && stdin.flush().is_ok()
        })
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

/// `corobench load` on one generator host.
struct Generator {
    host: HostAddress,
    remote: Remote,
}

impl Generator {
    fn failure(&self, why: &str) -> Ended {
        Ended::Failed(format!(
            "the generator on {} failed ({why}): {}",
            self.host.text,
            or_silent(&self.remote.stderr_tail())
        ))
    }
}

/// Every generator's report, merged exactly; and each one's own kernel
/// counters, by host.
fn merge_reports(
    generators: &mut [Generator],
) -> Result<(LoadReport, counters::ByGenerator), Ended> {
    let mut reports = Vec::with_capacity(generators.len());
    let mut counters = Vec::with_capacity(generators.len());
    for generator in generators.iter_mut() {
        generator.remote.finish_reading();
        let text = generator.remote.drain_stdout().join("\n");
        let mut report: LoadReport = serde_json::from_str(&text)
            .map_err(|e| generator.failure(&format!("its output is no load report: {e}")))?;
        counters.push((generator.host.text.clone(), report.counters.take()));
        reports.push(report);
    }
    let inputs: Vec<corobench_load::MergeInput<'_>> = generators
        .iter()
        .zip(&reports)
        .map(|(g, report)| corobench_load::MergeInput {
            source: &g.host.text,
            report,
        })
        .collect();
    let merged = corobench_load::merge(&inputs)
        .map_err(|e| Ended::Failed(format!("the generators' reports do not merge: {e}")))?;
    Ok((merged, counters))
}

/// The merged window in Unix ms.
fn window_ms(load: &LoadReport) -> (u64, u64) {
    let start_ms = load.placement.window_start_unix_us.unwrap_or(0) / 1000;
    (start_ms, start_ms + duration_ms(load.elapsed_s))
}

/// `--param NAME=VALUE` for each parameter.
pub(super) fn param_flags(parameters: &BTreeMap<String, String>) -> Vec<String> {
    parameters
        .iter()
        .flat_map(|(name, value)| ["--param".to_owned(), format!("{name}={value}")])
        .collect()
}

fn duration_ms(seconds: f64) -> u64 {
    // Saturating float-to-int: a window is never negative nor near u64::MAX.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ms = (seconds * 1000.0).round().max(0.0) as u64;
    ms
}

/// The same for every generator: a whole second (the merged timeline is
/// cut into whole seconds) at least the lead plus the warm-up ahead.
fn start_instant(scenario: &PlannedScenario) -> SystemTime {
    let earliest = SystemTime::now() + START_LEAD + scenario.measurement.warmup;
    let secs = earliest
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() + 1);
    UNIX_EPOCH + Duration::from_secs(secs)
}

/// The middle of the measured window, in Unix ms.
fn halfway_unix_ms(start_at: SystemTime, window: Duration) -> i64 {
    counters::unix_ms(start_at + window / 2)
}

fn until(instant: SystemTime) -> Duration {
    instant
        .duration_since(SystemTime::now())
        .unwrap_or_default()
}

fn unix_seconds(instant: SystemTime) -> String {
    instant
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .to_string()
}

pub(super) fn server_url(address: &str, port: u16, path: &str) -> String {
    if address.contains(':') {
        format!("http://[{address}]:{port}{path}")
    } else {
        format!("http://{address}:{port}{path}")
    }
}

pub(super) fn or_silent(text: &str) -> String {
    if text.is_empty() {
        "it wrote nothing to stderr".into()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up() {
        let mut scenario = crate::fakes::plan(1, 1, None, 1).scenarios[0].clone();
        scenario.schedule = corobench_model::Schedule::closed(5);
        let share = |i| crate::remote::load_args::share(&scenario, i, 3);
        let parts: Vec<u32> = (0..3).map(|i| share(i).connections).collect();
        assert_eq!(parts, [2, 2, 1]);
        scenario.schedule = corobench_model::Schedule::open(900.0, 4);
        let half = crate::remote::load_args::share(&scenario, 1, 2);
        assert_eq!(half.rate, Some(450.0));
        assert_eq!(server_url("fd00::1", 80, "/x"), "http://[fd00::1]:80/x");
    }
}
