//! One trial, written once: start the server → wait until it is healthy →
//! take its baseline footprint → the middle step → idle → check for leaks
//! → stop → record. The middle step ([`Step`]) is what kinds of trial
//! differ in: a load, idle connections (memory per connection), a program
//! run to its end, or a profile. Where the server and the generators run
//! is a [`Place`]: this machine, or hosts reached through a transport; the
//! skeleton does not know which.

pub mod place;
mod profile;
mod record;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use corobench_model::{
    IdleMeasurement, MachineProbe, ProfileOutcome, ProgramResult, Protocol, TrialRecord,
};
use corobench_spec::PlannedScenario;

pub use self::place::{LoadWindow, Place, Server, ServerStopped, ServerToStart};
pub use self::profile::profile;
use crate::events::{Phase, RunEvent, RunObserver};
use crate::leak::{LeakCheck, Settled};
use crate::order::TrialSlot;
use crate::rounds::{TrialExecutor, TrialOutcome};

/// Why a trial measured nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Halt {
    /// Ctrl-C came: nothing of the trial is kept.
    Interrupted,
    /// It failed, for this reason (stored with the trial).
    Failed(String),
}

/// The middle of a trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The scenario's load over a warm-up and a measured window.
    Load,
    /// Idle connections held open while the server's memory settles.
    Idle,
    /// A program target run to its end, beside its server if it has one.
    Program,
    /// The load with a profiler attached; only the profile is kept.
    Profile,
}

impl Step {
    /// The step of a scenario's measured trials.
    #[must_use]
    pub fn of(scenario: &PlannedScenario) -> Self {
        if scenario.program.is_some() {
            Self::Program
        } else if scenario.workload.idle {
            Self::Idle
        } else {
            Self::Load
        }
    }

    /// Whether the server's footprint after the step is checked against
    /// its baseline: only a load can leave tasks, threads or processes
    /// behind that the figures should be read with.
    fn checks_leaks(self) -> bool {
        self == Self::Load
    }

    /// What the trial fails with when its server is gone after the step.
    fn gone_means(self) -> Option<&'static str> {
        match self {
            Self::Load => Some("the target exited during the measurement"),
            Self::Idle => Some("the target exited while it held the connections"),
            Self::Program | Self::Profile => None,
        }
    }
}

/// What the middle step measured.
#[derive(Debug)]
pub enum Middle {
    Load(Box<LoadWindow>),
    Idle(IdleMeasurement),
    Program(ProgramResult),
    Profile(ProfileOutcome),
}

/// A trial that ran to its end, before it is recorded.
#[derive(Debug)]
pub struct Measured {
    pub probe: Option<MachineProbe>,
    pub middle: Middle,
    /// The leak check's footprints, for a step that has one.
    pub settled: Option<Settled>,
    /// The server's samples and how it stopped; `None` without a server.
    pub stopped: Option<ServerStopped>,
    /// The URL of a server found running rather than started.
    pub attached_url: Option<String>,
}

/// Trials at one place: what the round loops hand each trial to.
#[derive(Debug)]
pub struct Trials<P> {
    pub place: P,
}

impl<P: Place> TrialExecutor for Trials<P> {
    fn run_trial(
        &self,
        scenario: &PlannedScenario,
        slot: TrialSlot,
        sequence: u32,
        observer: &dyn RunObserver,
    ) -> TrialOutcome {
        let started_at = crate::wall_clock::unix_ms();
        let blank = TrialRecord::started(slot.scenario, slot.trial, sequence, started_at);
        match run(&self.place, scenario, Step::of(scenario), observer) {
            Ok(measured) => {
                TrialOutcome::Ended(Box::new(measured.record(blank, scenario, observer)))
            }
            Err(Halt::Interrupted) => TrialOutcome::Interrupted,
            Err(Halt::Failed(why)) => TrialOutcome::Ended(Box::new(blank.failed(why))),
        }
    }
}

/// Runs one trial of `scenario` at `place`, with `step` in its middle.
///
/// # Errors
/// A step failed (the reason is the trial's failure), or Ctrl-C came.
pub fn run<P: Place>(
    place: &P,
    scenario: &PlannedScenario,
    step: Step,
    observer: &dyn RunObserver,
) -> Result<Measured, Halt> {
    let stop = &place.env().stop;
    observer.on(RunEvent::TrialPhase(Phase::Starting));
    let probe = (step != Step::Profile)
        .then(|| place.probe(observer))
        .flatten();
    let mut server = start(place, scenario, step)?;
    let baseline = match server.as_mut() {
        Some(server) if step.checks_leaks() => {
            let baseline = server.footprint();
            Some(LeakCheck::before(server.host(), baseline))
        }
        _ => None,
    };
    let middle = middle(place, scenario, step, server.as_mut(), observer).map_err(|halt| {
        if stopped(stop) {
            Halt::Interrupted
        } else {
            halt
        }
    })?;
    observer.on(RunEvent::TrialPhase(Phase::Stopping));
    // The idle time is the leak check's patience, not a fixed pause: a
    // server back at its baseline at once (most are) costs no waiting.
    let idle = if step == Step::Load {
        scenario.measurement.idle
    } else {
        Duration::ZERO
    };
    if baseline.is_none() {
        sleep_unless_stopped(stop, idle);
    }
    if stopped(stop) {
        return Err(Halt::Interrupted);
    }
    if let (Some(server), Some(why)) = (server.as_mut(), step.gone_means())
        && server.is_gone()
    {
        return Err(Halt::Failed(server.explain(why)));
    }
    let settled = match (baseline, server.as_mut()) {
        (Some(check), Some(server)) => Some(check.settle(idle, stop, || server.footprint())),
        _ => None,
    };
    if stopped(stop) {
        return Err(Halt::Interrupted);
    }
    let attached_url = server
        .as_ref()
        .and_then(|s| s.attached_url().map(str::to_owned));
    Ok(Measured {
        probe,
        middle,
        settled,
        stopped: server.map(Server::stop),
        attached_url,
    })
}

/// The trial's server: the scenario's target (one already running is
/// measured where it runs), a fresh one for idle connections and profiles,
/// and for a program the server it talks to, if it talks to one.
fn start<P: Place>(
    place: &P,
    scenario: &PlannedScenario,
    step: Step,
) -> Result<Option<P::Server>, Halt> {
    if step != Step::Program {
        let server = ServerToStart {
            target: &scenario.target,
            parameters: &scenario.parameters,
            needs_database: scenario.needs_database,
            protocol: scenario.schedule.protocol,
            fresh: step != Step::Load,
        };
        return place.start_server(server).map(Some);
    }
    let Some(choice) = scenario.program.as_ref().and_then(|p| p.server.as_ref()) else {
        return Ok(None);
    };
    let server = ServerToStart {
        target: &choice.target,
        parameters: &choice.parameters,
        needs_database: false,
        protocol: Protocol::HTTP1,
        fresh: true,
    };
    match place.start_server(server) {
        Ok(server) => Ok(Some(server)),
        Err(Halt::Failed(why)) => Err(Halt::Failed(format!(
            "the server {choice} did not start: {why}"
        ))),
        Err(Halt::Interrupted) => Err(Halt::Interrupted),
    }
}

/// The step between the baseline and the idle time.
fn middle<P: Place>(
    place: &P,
    scenario: &PlannedScenario,
    step: Step,
    server: Option<&mut P::Server>,
    observer: &dyn RunObserver,
) -> Result<Middle, Halt> {
    let needed = || Halt::Failed(format!("{} has no server to measure", scenario.target));
    match step {
        Step::Program => {
            observer.on(RunEvent::TrialPhase(Phase::RunningProgram));
            place.run_program(scenario, server).map(Middle::Program)
        }
        Step::Load => {
            let server = server.ok_or_else(needed)?;
            place
                .load(scenario, server, observer)
                .map(|window| Middle::Load(Box::new(window)))
        }
        Step::Idle => {
            let server = server.ok_or_else(needed)?;
            observer.on(RunEvent::TrialPhase(Phase::WarmingUp));
            place.hold_idle(scenario, server).map(Middle::Idle)
        }
        Step::Profile => {
            let server = server.ok_or_else(needed)?;
            place
                .profile(scenario, server, observer)
                .map(Middle::Profile)
        }
    }
}

fn stopped(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests;

/// Sleeps `total`, or less if Ctrl-C arrives.
pub(crate) fn sleep_unless_stopped(stop: &AtomicBool, total: Duration) {
    let end = Instant::now() + total;
    while Instant::now() < end && !stopped(stop) {
        std::thread::sleep(
            Duration::from_millis(50).min(end.saturating_duration_since(Instant::now())),
        );
    }
}
