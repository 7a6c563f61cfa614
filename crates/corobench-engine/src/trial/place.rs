//! Where the two sides of a trial run. The server side: the target started
//! (or found), its footprint, its resource samples, its stop. The generator
//! side: the scenario's load over a window, the idle connections, a
//! program. The trial's skeleton ([`super`]) speaks only these two traits;
//! [`crate::local::ThisMachine`] runs both sides in this process, and
//! [`crate::hosts::OnHosts`] on hosts reached through a
//! [`crate::transport::Transport`] (SSH, kubectl, this machine's shell).

use std::collections::BTreeMap;

use corobench_model::{
    IdleMeasurement, LoadReport, MachineProbe, ProfileOutcome, ProgramResult, Protocol,
    TrialCounters, TrialFlag,
};
use corobench_sampler::ResourceSeries;
use corobench_spec::PlannedScenario;

use super::Halt;
use crate::events::RunObserver;
use crate::leak::{Footprint, Unreadable};
use crate::prepare::TrialEnvironment;

/// A server a trial starts.
#[derive(Clone, Copy, Debug)]
pub struct ServerToStart<'a> {
    pub target: &'a str,
    pub parameters: &'a BTreeMap<String, String>,
    /// Hand it the run's database (a workload reads `/db`).
    pub needs_database: bool,
    /// What it is told to serve (`HTTP_PROTOCOL`, and over TLS the run's
    /// certificates).
    pub protocol: Protocol,
    /// One already running at a URL is refused: the trial needs a process
    /// of its own (to hold connections, to profile).
    pub fresh: bool,
}

/// The measured window of a load, as the generator side saw it.
#[derive(Debug)]
pub struct LoadWindow {
    /// Every generator's report, merged.
    pub report: LoadReport,
    /// The tasks the target reported halfway through the window.
    pub peak_tasks: Option<u64>,
    /// What the kernel counted for the server and the generators.
    pub counters: TrialCounters,
    /// The machine-speed probe, where a place takes it with the load.
    pub probe: Option<MachineProbe>,
}

/// What stopping a server left.
#[derive(Debug, Default)]
pub struct ServerStopped {
    /// Its resource samples over the trial's middle step; `None` when it
    /// was not sampled (a server already running whose process is unknown).
    pub series: Option<ResourceSeries>,
    /// It did not stop cleanly.
    pub flag: Option<TrialFlag>,
}

/// Where a trial's server and generators run.
pub trait Place {
    /// The server side of one trial.
    type Server: Server;

    /// What every trial of the run shares.
    fn env(&self) -> &TrialEnvironment;

    /// The machine-speed probe, taken before the server starts; `None`
    /// where it comes with the load ([`LoadWindow::probe`]) or is off.
    fn probe(&self, observer: &dyn RunObserver) -> Option<MachineProbe>;

    /// Starts `server` and waits until it serves.
    ///
    /// # Errors
    /// It did not start or become healthy (or Ctrl-C came first).
    fn start_server(&self, server: ServerToStart<'_>) -> Result<Self::Server, Halt>;

    /// Warms up and measures `server` with the scenario's load; the one
    /// place where the scenario's connection settings reach the generators
    /// is [`crate::generator`].
    ///
    /// # Errors
    /// The load failed, or Ctrl-C came.
    fn load(
        &self,
        scenario: &PlannedScenario,
        server: &mut Self::Server,
        observer: &dyn RunObserver,
    ) -> Result<LoadWindow, Halt>;

    /// Opens the scenario's idle connections and reads the server's
    /// settled memory while they are open.
    ///
    /// # Errors
    /// The connections or the memory could not be had.
    fn hold_idle(
        &self,
        scenario: &PlannedScenario,
        server: &mut Self::Server,
    ) -> Result<IdleMeasurement, Halt>;

    /// Runs the scenario's program to its end beside `server`.
    ///
    /// # Errors
    /// The program failed, printed no figures, or Ctrl-C came.
    fn run_program(
        &self,
        scenario: &PlannedScenario,
        server: Option<&mut Self::Server>,
    ) -> Result<ProgramResult, Halt>;

    /// Loads `server` as [`Place::load`] does with a profiler attached to
    /// it after the warm-up; the load's figures are not kept.
    ///
    /// # Errors
    /// The profile could not be taken, or Ctrl-C came.
    fn profile(
        &self,
        scenario: &PlannedScenario,
        server: &mut Self::Server,
        observer: &dyn RunObserver,
    ) -> Result<ProfileOutcome, Halt>;
}

/// The server side of one trial.
pub trait Server {
    /// Where it runs, for messages (`this machine`, `ssh://host`).
    fn host(&self) -> &str;

    /// What the target holds now (processes, threads, RSS, tasks): the
    /// leak check's reading.
    ///
    /// # Errors
    /// The footprint could not be read, with why.
    fn footprint(&mut self) -> Result<Footprint, Unreadable>;

    /// Whether the server is gone (it exited, or stopped answering).
    fn is_gone(&mut self) -> bool;

    /// `why` a trial failed, with what is known of the server's state (its
    /// exit status, the last lines it wrote).
    fn explain(&mut self, why: &str) -> String;

    /// The URL of a server corobench found running and did not start.
    fn attached_url(&self) -> Option<&str>;

    /// Stops it (a server found running is left so), with its samples.
    fn stop(self) -> ServerStopped;
}
