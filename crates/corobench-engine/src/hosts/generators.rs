//! The load of a trial on hosts: `corobench load --json --start-at T` on
//! every generator host, each measuring the same wall-clock window with
//! its share of the connections and the rate; their reports merged
//! exactly; the server's kernel counters, peak of tasks and machine speed
//! asked of `corobench serve` over the same window.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use corobench_model::{LoadReport, Protocol};
use corobench_spec::{HostAddress, PlannedScenario};

use super::counters;
use super::footprints::Footprints;
use super::session::ServerSession;
use super::{OnHosts, POLL, or_silent};
use crate::events::{Phase, RunEvent, RunObserver};
use crate::generator;
use crate::transport::Remote;
use crate::trial::{Halt, LoadWindow};

/// From now to the start of the window, beyond the warm-up: every
/// generator must connect, start, and reach the server by then.
const START_LEAD: Duration = Duration::from_secs(3);
/// After its window should have ended, how long a generator may take to
/// finish and report.
const GENERATOR_SLACK: Duration = Duration::from_secs(30);

/// `corobench load` on one generator host.
struct Generator {
    host: HostAddress,
    remote: Remote,
}

impl Generator {
    fn failure(&self, why: &str) -> Halt {
        Halt::Failed(format!(
            "the generator on {} failed ({why}): {}",
            self.host.text,
            or_silent(&self.remote.stderr_tail())
        ))
    }
}

impl OnHosts<'_> {
    /// Warms up and measures the server of `session` from every generator
    /// host.
    pub(super) fn measure(
        &self,
        scenario: &PlannedScenario,
        session: &mut ServerSession,
        observer: &dyn RunObserver,
    ) -> Result<LoadWindow, Halt> {
        let host = session.host.clone();
        let start_at = start_instant(scenario);
        let window = scenario.measurement.duration;
        let mut footprints = std::mem::take(&mut session.footprints);
        let peak = footprints.order_at(session, counters::unix_ms(start_at + window / 2));
        session.footprints = footprints;
        let count_from = counters::order(session, start_at, window);
        let mut generators = self.start_generators(scenario, session.port, start_at)?;
        observer.on(RunEvent::TrialPhase(Phase::WarmingUp));
        let deadline = Instant::now()
            + until(start_at)
            + scenario.measurement.duration
            + scenario.measurement.timeout
            + GENERATOR_SLACK;
        self.wait_generators(session, &mut generators, deadline)?;
        let (report, generator_counters) = merge_reports(&mut generators)?;
        drop(generators);
        let counters = counters::collect(session, &host, count_from, &generator_counters);
        let probe = self.env.machine_probe.then(|| {
            super::probe::joined(session.probe.take(), report.probe_mb_per_s, &host)
                .map_err(|why| observer.notice(&format!("machine-speed probe skipped: {why}")))
                .ok()
        });
        session.span_ms = window_ms(&report);
        Ok(LoadWindow {
            peak_tasks: peak.and_then(|id| Footprints::tasks_of(session, id)),
            report,
            counters,
            probe: probe.flatten(),
        })
    }

    /// Starts `corobench load` on every generator host, each with its share.
    fn start_generators(
        &self,
        scenario: &PlannedScenario,
        port: u16,
        start_at: SystemTime,
    ) -> Result<Vec<Generator>, Halt> {
        let hosts = &self.hosts.hosts;
        let count = hosts.generators.len();
        let protocol = scenario.schedule.protocol;
        let url = generator::server_url_over(
            protocol,
            &hosts.server_address,
            port,
            &scenario.workload.path,
        );
        let authority = self.authority(protocol)?;
        let body = self.env.bodies.get(&scenario.workload.name);
        let body = generator::body_args(&scenario.workload.name, body.map(Vec::as_slice))
            .map_err(|e| Halt::Failed(e.to_string()))?;
        let mut generators = Vec::with_capacity(count);
        for (i, host) in hosts.generators.iter().enumerate() {
            let mut argv = vec![self.hosts.generator_binaries[i].clone(), "load".into()];
            argv.push("--json".into());
            let share = generator::share(scenario, i, count);
            argv.extend(generator::load_args(
                scenario,
                share,
                self.env.backend.name(),
            ));
            argv.extend(generator::protocol_args(&scenario.schedule, "-"));
            argv.extend(body.iter().cloned());
            argv.extend(self.probe_flag());
            if let Some(cpus) = &hosts.generator_cpus[i] {
                argv.extend(["--cpus".into(), cpus.clone()]);
            }
            argv.extend(["--start-at".into(), unix_seconds(start_at)]);
            argv.push(url.clone());
            let command = self.hosts.transport.command(host, &argv);
            let mut remote =
                Remote::start(command, authority.is_some()).map_err(|e| self.cannot_start(&e))?;
            if let Some(ca) = &authority {
                // `--ca -`: the authority, then end of file. A generator
                // that died before reading it says why when it is waited for.
                let _ = super::session::write_line(&mut remote, ca);
                remote.close_stdin();
            }
            generators.push(Generator {
                host: host.clone(),
                remote,
            });
        }
        Ok(generators)
    }

    /// Waits until every generator has reported, watching the server's
    /// session: its end is the loss of the server host.
    fn wait_generators(
        &self,
        server: &mut ServerSession,
        generators: &mut [Generator],
        deadline: Instant,
    ) -> Result<(), Halt> {
        loop {
            server.collect_samples();
            if self.stopped() {
                return Err(Halt::Interrupted);
            }
            if let Some(status) = server.ended() {
                return Err(Halt::Failed(format!(
                    "the session with the server host {} ended during the trial ({status}); \
                     the trial is lost: {}",
                    server.host,
                    server.stderr()
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
                return Err(late.map_or_else(|| Halt::Failed(why.into()), |g| g.failure(why)));
            }
            std::thread::sleep(POLL);
        }
    }
}

impl OnHosts<'_> {
    /// The run's authority (PEM) that generators trust over TLS, `None`
    /// in cleartext.
    fn authority(&self, protocol: Protocol) -> Result<Option<String>, Halt> {
        if !protocol.tls {
            return Ok(None);
        }
        let certificates = super::session::certificates(self.env)?;
        Ok(Some(certificates.ca))
    }
}

/// Every generator's report, merged exactly; and each one's own kernel
/// counters, by host.
fn merge_reports(
    generators: &mut [Generator],
) -> Result<(LoadReport, counters::ByGenerator), Halt> {
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
        .map_err(|e| Halt::Failed(format!("the generators' reports do not merge: {e}")))?;
    Ok((merged, counters))
}

/// The merged window in Unix ms.
fn window_ms(load: &LoadReport) -> (u64, u64) {
    let start_ms = load.placement.window_start_unix_us.unwrap_or(0) / 1000;
    (start_ms, start_ms + super::duration_ms(load.elapsed_s))
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
