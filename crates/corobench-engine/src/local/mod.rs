//! Trials on this machine, in this process: the target starts on the
//! server CPUs, and the load generator, the sampler, the kernel counters,
//! the idle connections and programs run on the generator CPUs. No
//! `corobench serve` or `corobench load` process stands between the trial
//! and what it measures.

mod counters;
mod idle;
mod perf;
pub mod program;
mod server;
mod window;

use std::time::Duration;

use corobench_load::LoadError;
use corobench_model::{IdleMeasurement, MachineProbe, ProfileOutcome, ProgramResult};
use corobench_spec::PlannedScenario;
use corobench_target::TargetError;

pub use self::perf::PERF_VARIABLE;
pub use self::server::{LocalServer, TrialServer, start_or_attach};
use crate::answers;
use crate::events::RunObserver;
use crate::machine_probe;
use crate::prepare::TrialEnvironment;
use crate::trial::{Halt, LoadWindow, Place, ServerToStart};

/// Why a trial on this machine measured nothing. Stored with the trial as
/// its failure.
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
    /// A server already running whose URL speaks another protocol than
    /// the scenario.
    #[error("{0}")]
    ProtocolMismatch(String),
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

/// This machine as the place of a run's trials.
#[derive(Debug)]
pub struct ThisMachine<'a> {
    pub env: &'a TrialEnvironment,
}

impl Place for ThisMachine<'_> {
    type Server = LocalServer;

    fn env(&self) -> &TrialEnvironment {
        self.env
    }

    /// The machine-speed probe on the server's CPUs, then the generator's,
    /// unless the run turned it off; a probe that cannot run is said and
    /// left out.
    fn probe(&self, observer: &dyn RunObserver) -> Option<MachineProbe> {
        if !self.env.machine_probe {
            return None;
        }
        machine_probe::measure(&self.env.server_cpus, &self.env.generator_set)
            .map_err(|why| observer.notice(&format!("machine-speed probe skipped: {why}")))
            .ok()
    }

    fn start_server(&self, server: ServerToStart<'_>) -> Result<LocalServer, Halt> {
        let env = self.env;
        let target = start_or_attach(
            env,
            server.target,
            server.parameters,
            server.needs_database,
            server.protocol,
        )
        .map_err(|why| Halt::Failed(why.to_string()))?;
        if server.fresh && matches!(target, TrialServer::Attached(_)) {
            let why = TrialError::NeedsFreshStart(server.target.to_owned());
            return Err(Halt::Failed(why.to_string()));
        }
        Ok(LocalServer {
            stats: target.stats_route(env),
            target,
            sampled: None,
        })
    }

    fn load(
        &self,
        scenario: &PlannedScenario,
        server: &mut LocalServer,
        observer: &dyn RunObserver,
    ) -> Result<LoadWindow, Halt> {
        let measured = match window::measure(
            self.env,
            scenario,
            (&server.target, server.stats.as_ref()),
            observer,
        ) {
            Ok(Some(measured)) => measured,
            Ok(None) => return Err(Halt::Interrupted),
            Err(why) if why.concerns_target() => {
                return Err(Halt::Failed(
                    server.target.describe_failure(&why.to_string()),
                ));
            }
            Err(why) => return Err(Halt::Failed(why.to_string())),
        };
        server.sampled = measured.sampled.then_some(measured.series);
        let mut report = measured.report;
        let user_server = !server.target.serves_contract();
        answers::judge(&mut report, &scenario.workload.expect, user_server)
            .map_err(Halt::Failed)?;
        Ok(LoadWindow {
            report,
            peak_tasks: measured.peak_tasks,
            counters: measured.counters,
            probe: None,
        })
    }

    fn hold_idle(
        &self,
        scenario: &PlannedScenario,
        server: &mut LocalServer,
    ) -> Result<IdleMeasurement, Halt> {
        let (idle, series) = idle::hold(self.env, scenario, &server.target)?;
        server.sampled = Some(series);
        Ok(idle)
    }

    fn run_program(
        &self,
        scenario: &PlannedScenario,
        server: Option<&mut LocalServer>,
    ) -> Result<ProgramResult, Halt> {
        program::run(self.env, scenario, server)
    }

    fn profile(
        &self,
        scenario: &PlannedScenario,
        server: &mut LocalServer,
        observer: &dyn RunObserver,
    ) -> Result<ProfileOutcome, Halt> {
        perf::profile(self.env, scenario, &server.target, observer)
    }
}
