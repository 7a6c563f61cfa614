//! One trial on this machine: start the target fresh, wait for health, take
//! a baseline, warm up and measure ([`super::window`]), idle, check for
//! leaks, stop and reap.

use std::collections::BTreeMap;
use std::time::Duration;

use corobench_load::LoadError;
use corobench_model::{
    MachineProbe, PoolWindow, ResourceSample, TaskCounts, TrialFlag, TrialRecord,
};
use corobench_spec::PlannedScenario;
use corobench_target::{RunningTarget, TargetError};

use crate::answers;
use crate::events::{Phase, RunEvent, RunObserver};
use crate::leak::{self, Footprint};
use crate::machine_probe;
use crate::order::TrialSlot;
use crate::prepare::TrialEnvironment;
use crate::rounds::{TrialExecutor, TrialOutcome};
use crate::server::{TrialServer, start_or_attach};
use crate::stats_probe;
use crate::wall_clock::unix_ms;
use crate::window::{self, Measured};

/// Lines of a target's stderr kept with a failed trial.
const STDERR_TAIL_LINES: usize = 20;

/// Why a trial measured nothing. Stored with the trial as its failure.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    #[error("{0} was not built")]
    NotBuilt(String),
    #[error("{target} did not start: {source}")]
    DidNotStart {
        target: String,
        source: Box<TargetError>,
    },
    #[error("{0}")]
    NotHealthy(Box<TargetError>),
    /// A server that should already be running is not there.
    #[error("{0}")]
    NotThere(Box<TargetError>),
    #[error(
        "{0} is already running at a URL, and this trial needs a server corobench starts \
         fresh (give servers.{0}.command instead of url)"
    )]
    NeedsFreshStart(String),
    #[error("the target has no process group")]
    NoProcessGroup,
    #[error("{0}")]
    Endpoint(LoadError),
    #[error("the load could not start: {0}")]
    LoadStart(LoadError),
    #[error("{0}")]
    Load(LoadError),
    #[error("the load generator panicked")]
    GeneratorPanicked,
    #[error("the load ended before its measured window began")]
    NoWindow,
    #[error("{0}")]
    SamplerStart(String),
    #[error("sampling the target failed: {0}")]
    Sampling(String),
    #[error("the target exited during the measurement")]
    TargetExited,
    #[error(
        "corobench itself was not running for {:.1} s during the trial (stopped with Ctrl-Z or \
         SIGSTOP, or starved of CPU), so its figures would not be the target's; keep the \
         machine otherwise idle while it measures",
        pause.as_secs_f64()
    )]
    Stalled { pause: Duration },
}

impl TrialError {
    /// Whether the target's own state (exit status, stderr) explains it.
    fn concerns_target(&self) -> bool {
        !matches!(self, Self::Stalled { .. })
    }
}

/// Trials run here: each starts a fresh target process on the server CPUs
/// and loads it from the generator CPUs.
#[derive(Debug)]
pub struct LocalTrials<'a> {
    pub env: &'a TrialEnvironment,
}

impl TrialExecutor for LocalTrials<'_> {
    fn run_trial(
        &self,
        scenario: &PlannedScenario,
        slot: TrialSlot,
        sequence: u32,
        observer: &dyn RunObserver,
    ) -> TrialOutcome {
        let probe = self.probe(observer);
        let outcome = if scenario.program.is_some() {
            super::program_trial::run(self.env, scenario, slot, sequence, observer)
        } else if scenario.workload.idle {
            super::idle_trial::run(self.env, scenario, slot, sequence, observer)
        } else {
            run(self.env, scenario, slot, sequence, observer)
        };
        match outcome {
            TrialOutcome::Ended(mut trial) => {
                trial.probe = probe;
                TrialOutcome::Ended(trial)
            }
            other => other,
        }
    }
}

impl LocalTrials<'_> {
    /// The machine-speed probe, before the target starts, unless the run
    /// turned it off; a probe that cannot run is said and left out.
    fn probe(&self, observer: &dyn RunObserver) -> Option<MachineProbe> {
        if !self.env.machine_probe {
            return None;
        }
        machine_probe::measure(&self.env.server_cpus, &self.env.generator_set)
            .map_err(|why| observer.notice(&format!("machine-speed probe skipped: {why}")))
            .ok()
    }
}

/// Runs one trial of `scenario`.
pub fn run(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    slot: TrialSlot,
    sequence: u32,
    observer: &dyn RunObserver,
) -> TrialOutcome {
    let blank = blank_record(slot, sequence);
    observer.on(RunEvent::TrialPhase(Phase::Starting));
    let mut target = match start_or_find(env, scenario) {
        Ok(target) => target,
        Err(why) => return failed(blank, why.to_string()),
    };
    let before = footprint(&target);
    let mut measured = match window::measure(env, scenario, &target, observer) {
        Ok(Some(measured)) => measured,
        Ok(None) => return TrialOutcome::Interrupted,
        Err(why) if why.concerns_target() => {
            return failed(blank, target.describe_failure(&why, STDERR_TAIL_LINES));
        }
        Err(why) => return failed(blank, why.to_string()),
    };
    let user_server = !target.serves_contract();
    if let Err(why) = answers::judge(&mut measured.report, &scenario.workload.expect, user_server) {
        return failed(blank, why);
    }
    observer.on(RunEvent::TrialPhase(Phase::Stopping));
    window::sleep_unless_stopped(&env.stop, scenario.measurement.idle);
    if env.stop.load(std::sync::atomic::Ordering::Relaxed) {
        return TrialOutcome::Interrupted;
    }
    if target.gone().is_some() {
        let why = target.describe_failure(&TrialError::TargetExited, STDERR_TAIL_LINES);
        return failed(blank, why);
    }
    let mut trial = measured_record(blank, &target, &before, measured);
    if let Err(error) = target.stop() {
        trial.flags.push(TrialFlag::Leak {
            what: format!("the target did not stop cleanly: {error}"),
        });
    }
    TrialOutcome::Ended(Box::new(trial))
}

/// A record of `slot` with nothing measured yet.
pub(crate) fn blank_record(slot: TrialSlot, sequence: u32) -> TrialRecord {
    TrialRecord::started(slot.scenario, slot.trial, sequence, unix_ms())
}

pub(crate) fn failed(trial: TrialRecord, why: String) -> TrialOutcome {
    TrialOutcome::Ended(Box::new(trial.failed(why)))
}

/// The record of a trial that measured, with its flags and task counts.
fn measured_record(
    mut trial: TrialRecord,
    target: &TrialServer,
    before: &Footprint,
    measured: Measured,
) -> TrialRecord {
    let after = settled_footprint(target, before, &measured.series.samples);
    trial.flags = flags(&measured.report, before, &after, &measured.series.samples);
    trial.tasks = TaskCounts {
        before: before.tasks,
        peak: measured.peak_tasks,
        after: after.tasks,
    };
    trial.pool = before
        .pool
        .zip(after.pool)
        .map(|(before, after)| PoolWindow { before, after });
    trial.resources = measured.sampled.then_some(measured.series.summary);
    trial.resource_series = measured.series.samples;
    if let TrialServer::Attached(server) = target {
        trial.flags.push(TrialFlag::AlreadyRunning {
            url: server.url.clone(),
        });
    }
    trial.load = Some(measured.report);
    trial.counters = Some(measured.counters);
    trial
}

/// Starts `scenario`'s server fresh and waits until it is healthy; one
/// already running at a URL is refused.
pub(super) fn start(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
) -> Result<RunningTarget, TrialError> {
    launch_server(
        env,
        &scenario.target,
        &scenario.parameters,
        scenario.needs_database,
    )
}

/// The server of a measured trial: started fresh, or found where it runs.
fn start_or_find(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
) -> Result<TrialServer, TrialError> {
    start_or_attach(
        env,
        &scenario.target,
        &scenario.parameters,
        scenario.needs_database,
    )
}

/// Starts server `target` fresh on the server CPUs and waits until it is
/// healthy; one already running at a URL is refused.
pub(crate) fn launch_server(
    env: &TrialEnvironment,
    target: &str,
    parameters: &BTreeMap<String, String>,
    needs_database: bool,
) -> Result<RunningTarget, TrialError> {
    match start_or_attach(env, target, parameters, needs_database)? {
        TrialServer::Started(running) => Ok(*running),
        TrialServer::Attached(_) => Err(TrialError::NeedsFreshStart(target.to_owned())),
    }
}

/// The footprint once it is back near the baseline, or after the grace time.
fn settled_footprint(
    target: &TrialServer,
    before: &Footprint,
    window: &[ResourceSample],
) -> Footprint {
    leak::settle(before, window, leak::GRACE, || Some(footprint(target)))
        .unwrap_or_else(|| footprint(target))
}

fn footprint(target: &TrialServer) -> Footprint {
    let tree = target
        .pgid()
        .and_then(|pgid| u32::try_from(pgid).ok())
        .and_then(|pgid| corobench_sampler::snapshot(pgid).ok());
    let stats = target
        .serves_contract()
        .then(|| stats_probe::read(target.addr()))
        .flatten()
        .unwrap_or_default();
    Footprint {
        tasks: stats.tasks,
        pool: stats.pool,
        processes: tree.as_ref().map_or(0, |t| t.processes),
        threads: tree.as_ref().map_or(0, |t| t.threads),
        rss_bytes: tree.as_ref().map_or(0, |t| t.rss_bytes),
    }
}

fn flags(
    report: &corobench_model::LoadReport,
    before: &Footprint,
    after: &Footprint,
    window: &[ResourceSample],
) -> Vec<TrialFlag> {
    let mut flags = TrialFlag::of_load(report);
    flags.extend(leak::check(before, after, window));
    flags
}

#[cfg(test)]
mod tests {
    use corobench_analyze::fixtures::load;
    use corobench_model::StatusCounts;

    #[test]
    fn answers_outside_the_expected_status_class_are_errors_of_their_own() {
        let mut report = load(100.0, &[100; 100]);
        report.requests = 100;
        report.status = StatusCounts {
            success: 90,
            redirection: 10,
            ..StatusCounts::default()
        };
        report.count_unexpected_status(200);
        assert_eq!(report.errors.unexpected_status, 10);
        assert!(
            (report.error_rate - 0.10).abs() < 1e-12,
            "{}",
            report.error_rate
        );
        report.count_unexpected_status(302);
        assert_eq!(report.errors.unexpected_status, 90);
        report.count_unexpected_status(404);
        assert_eq!(report.errors.unexpected_status, 100);
    }
}
