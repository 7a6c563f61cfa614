//! An idle trial (`idle_connections`): memory per connection. The target
//! starts fresh on the server CPUs; from a thread on the generator CPUs,
//! N keep-alive connections each send the workload's request once and read
//! the answer, then stay open and silent; the target's process tree is
//! sampled while its RSS settles (RSS within 64 KiB for 1 s, at most 15 s),
//! and the settled RSS is the trial's figure. The connections close and
//! the target stops. No load is measured.

use std::sync::atomic::Ordering;
use std::time::Duration;

use corobench_load::IdleConnections;
use corobench_model::IdleMeasurement;
use corobench_sampler::{DEFAULT_INTERVAL, ResourceSeries, Sampler, SettleRule, settled_rss};
use corobench_spec::PlannedScenario;
use corobench_target::RunningTarget;

use crate::events::{Phase, RunEvent, RunObserver};
use crate::order::TrialSlot;
use crate::prepare::TrialEnvironment;
use crate::rounds::TrialOutcome;
use crate::trial::{blank_record, failed, start};
use crate::window;

/// The least time the connections get to open, whatever `run.timeout` is:
/// tens of thousands of connects one after another take seconds.
const MIN_OPEN_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs one idle trial of `scenario`.
pub(super) fn run(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    slot: TrialSlot,
    sequence: u32,
    observer: &dyn RunObserver,
) -> TrialOutcome {
    let mut trial = blank_record(slot, sequence);
    observer.on(RunEvent::TrialPhase(Phase::Starting));
    let mut target = match start(env, scenario) {
        Ok(target) => target,
        Err(why) => return failed(trial, why.to_string()),
    };
    observer.on(RunEvent::TrialPhase(Phase::WarmingUp));
    let measured = hold_idle(env, scenario, &target);
    observer.on(RunEvent::TrialPhase(Phase::Stopping));
    let exited = target.exit_status().is_some();
    let _ = target.stop();
    if env.stop.load(Ordering::Relaxed) {
        return TrialOutcome::Interrupted;
    }
    match measured {
        Ok(_) if exited => failed(
            trial,
            "the target exited while it held the connections".into(),
        ),
        Ok((idle, series)) => {
            trial.resources = Some(series.summary);
            trial.resource_series = series.samples;
            trial.idle = Some(idle);
            TrialOutcome::Ended(Box::new(trial))
        }
        Err(why) => failed(trial, why),
    }
}

/// Opens the idle connections and reads the settled RSS while they are open.
fn hold_idle(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    target: &RunningTarget,
) -> Result<(IdleMeasurement, ResourceSeries), String> {
    let config = window::load_config(env, scenario, target.addr()).map_err(|e| e.to_string())?;
    let request = config
        .request
        .serialize(&config.endpoint)
        .map_err(|e| e.to_string())?;
    let connections = scenario.schedule.connections;
    let timeout = scenario.measurement.timeout.max(MIN_OPEN_TIMEOUT);
    let (addr, pgid) = (target.addr(), target.pgid());
    let opened = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                env.generator_set
                    .apply_to_current_thread()
                    .map_err(|e| format!("cannot pin to the generator CPUs: {e}"))?;
                IdleConnections::open(addr, &request, connections, timeout)
                    .map_err(|e| format!("the idle connections could not be opened: {e}"))
            })
            .join()
            .unwrap_or_else(|_| Err("the thread opening the connections panicked".to_owned()))
    })?;
    let sampler = Sampler::start(pgid, DEFAULT_INTERVAL).map_err(|e| e.to_string())?;
    let settled = settled_rss(pgid, SettleRule::default());
    let series = sampler.stop().map_err(|e| e.to_string())?;
    let settled = settled.map_err(|e| format!("the target's memory could not be read: {e}"))?;
    // Counted after the RSS was read: a connection closed by then may have
    // been closed before it, and the RSS would not hold it.
    let open = opened.still_open();
    drop(opened);
    if open < opened_count(connections) {
        return Err(format!(
            "only {open} of the {connections} idle connections were still open when the \
             target's memory was read: the server closed the others, so the figure is not \
             memory with {connections} connections; memory per connection needs a server \
             that keeps idle connections open"
        ));
    }
    Ok((
        IdleMeasurement {
            connections,
            rss_bytes: settled.rss_bytes,
            settled: settled.settled,
            waited_s: settled.waited.as_secs_f64(),
        },
        series,
    ))
}

fn opened_count(connections: u32) -> usize {
    usize::try_from(connections).unwrap_or(usize::MAX)
}
