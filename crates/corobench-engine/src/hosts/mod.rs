//! Trials on other hosts: the server side is `corobench serve` on the
//! server host, held by one session of the transport (its stdin is the
//! target's lifeline and takes orders: footprints for the leak check,
//! kernel counts over the window); the generator side is `corobench load
//! --json --start-at T` on every generator host, or `corobench program` on
//! the first. Any local client (`ssh`, `kubectl`) still running when a
//! trial ends is killed and reaped ([`crate::transport::Remote`]). The
//! hosts are reached through whatever [`crate::transport::Transport`] they
//! were made ready with ([`ready`]), which is all this place knows of them.

mod asks;
pub mod clock;
mod counters;
mod footprints;
mod generators;
mod probe;
mod program;
pub mod ready;
mod session;

use std::sync::atomic::Ordering;
use std::time::Duration;

use corobench_model::{IdleMeasurement, MachineProbe, ProfileOutcome, ProgramResult};
use corobench_spec::PlannedScenario;

pub use self::ready::{ReadyHosts, check_clocks, connect};
pub use self::session::ServerSession;
use crate::events::RunObserver;
use crate::prepare::TrialEnvironment;
use crate::trial::{Halt, LoadWindow, Place, ServerToStart};

/// How often a trial looks at its sessions.
const POLL: Duration = Duration::from_millis(50);

/// The `[hosts]` of a run (or the pods made for it) as the place of its
/// trials.
#[derive(Debug)]
pub struct OnHosts<'a> {
    pub env: &'a TrialEnvironment,
    pub hosts: &'a ReadyHosts,
}

impl Place for OnHosts<'_> {
    type Server = ServerSession;

    fn env(&self) -> &TrialEnvironment {
        self.env
    }

    /// None before the server starts: `serve --probe` and each `load
    /// --probe` take it on their own host, and it comes with the load.
    fn probe(&self, _observer: &dyn RunObserver) -> Option<MachineProbe> {
        None
    }

    fn start_server(&self, server: ServerToStart<'_>) -> Result<ServerSession, Halt> {
        self.start_session(server)
    }

    fn load(
        &self,
        scenario: &PlannedScenario,
        server: &mut ServerSession,
        observer: &dyn RunObserver,
    ) -> Result<LoadWindow, Halt> {
        self.measure(scenario, server, observer)
    }

    fn hold_idle(
        &self,
        _scenario: &PlannedScenario,
        _server: &mut ServerSession,
    ) -> Result<IdleMeasurement, Halt> {
        Err(Halt::Failed(
            "idle connections are held on this machine only: an idle workload is not run on \
             hosts"
                .to_owned(),
        ))
    }

    fn run_program(
        &self,
        scenario: &PlannedScenario,
        server: Option<&mut ServerSession>,
    ) -> Result<ProgramResult, Halt> {
        self.program(scenario, server)
    }

    fn profile(
        &self,
        _scenario: &PlannedScenario,
        _server: &mut ServerSession,
        _observer: &dyn RunObserver,
    ) -> Result<ProfileOutcome, Halt> {
        Err(Halt::Failed(
            "profiles are taken on this machine only: perf is not run on hosts".to_owned(),
        ))
    }
}

impl OnHosts<'_> {
    fn cannot_start(&self, error: &std::io::Error) -> Halt {
        Halt::Failed(format!(
            "cannot run {}: {error}",
            self.hosts.transport.client()
        ))
    }

    fn stopped(&self) -> bool {
        self.env.stop.load(Ordering::Relaxed)
    }

    /// `--probe`, when the run probes the machine's speed before each trial.
    fn probe_flag(&self) -> Option<String> {
        self.env.machine_probe.then(|| "--probe".to_owned())
    }
}

/// What a client wrote on stderr, or that it wrote nothing.
fn or_silent(text: &str) -> String {
    if text.is_empty() {
        "it wrote nothing to stderr".into()
    } else {
        // On lines of their own, after a line that ends with a colon: a
        // trial's one-line failure shows the last of them
        // (`failure_line`), not only the first.
        format!("its stderr ends:\n{text}")
    }
}

fn duration_ms(seconds: f64) -> u64 {
    // Saturating float-to-int: a window is never negative nor near u64::MAX.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ms = (seconds * 1000.0).round().max(0.0) as u64;
    ms
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_failure_line_shows_the_last_lines_of_a_hosts_stderr() {
        let why = format!(
            "corobench serve on the server host a ended (exit status: 2): {}",
            super::or_silent("starting\nloading go-nethttp\nerror: port 8080 is in use")
        );
        let line = corobench_model::failure_line(&why);
        assert!(line.ends_with("error: port 8080 is in use"), "{line}");
        assert!(
            line.starts_with("corobench serve on the server host a"),
            "{line}"
        );
        assert_eq!(super::or_silent(""), "it wrote nothing to stderr");
    }
}
