//! The middle of an idle trial (`idle_connections`): memory per
//! connection. From a thread on the generator CPUs, N keep-alive
//! connections each send the workload's request once and read the answer,
//! then stay open and silent; the target's process tree is sampled while
//! its RSS settles (RSS within 64 KiB for 1 s, at most 15 s), and the
//! settled RSS is the trial's figure. No load is measured.

use std::time::Duration;

use corobench_load::IdleConnections;
use corobench_model::IdleMeasurement;
use corobench_sampler::{DEFAULT_INTERVAL, ResourceSeries, Sampler, SettleRule, settled_rss};
use corobench_spec::PlannedScenario;

use super::TrialError;
use super::server::TrialServer;
use crate::generator;
use crate::prepare::TrialEnvironment;
use crate::trial::Halt;

/// The least time the connections get to open, whatever `run.timeout` is:
/// tens of thousands of connects one after another take seconds.
const MIN_OPEN_TIMEOUT: Duration = Duration::from_secs(60);

/// Opens the idle connections and reads the settled RSS while they are
/// open; the connections close when it returns.
pub(super) fn hold(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    target: &TrialServer,
) -> Result<(IdleMeasurement, ResourceSeries), Halt> {
    let failed = |why: String| Halt::Failed(why);
    let pgid = target
        .pgid()
        .ok_or_else(|| failed(TrialError::NoProcessGroup.to_string()))?;
    let config = generator::load_config(env, scenario, target.addr(), &target.trust(env))
        .map_err(|e| failed(e.to_string()))?;
    let request = config
        .request
        .serialize(&config.endpoint)
        .map_err(|e| failed(e.to_string()))?;
    let connections = scenario.schedule.connections;
    let timeout = scenario.measurement.timeout.max(MIN_OPEN_TIMEOUT);
    let addr = target.addr();
    let mut opened = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                env.generator_set
                    .apply_to_current_thread()
                    .map_err(|e| format!("cannot pin to the generator CPUs: {e}"))?;
                IdleConnections::open_to(addr, &config.endpoint, &request, connections, timeout)
                    .map_err(|e| format!("the idle connections could not be opened: {e}"))
            })
            .join()
            .unwrap_or_else(|_| Err("the thread opening the connections panicked".to_owned()))
    })
    .map_err(failed)?;
    let sampler = Sampler::start(pgid, DEFAULT_INTERVAL).map_err(|e| failed(e.to_string()))?;
    let settled = settled_rss(pgid, SettleRule::default());
    let series = sampler.stop().map_err(|e| failed(e.to_string()))?;
    let settled =
        settled.map_err(|e| failed(format!("the target's memory could not be read: {e}")))?;
    // Counted after the RSS was read: a connection closed by then may have
    // been closed before it, and the RSS would not hold it.
    let open = opened.still_open();
    drop(opened);
    if open < usize::try_from(connections).unwrap_or(usize::MAX) {
        return Err(failed(format!(
            "only {open} of the {connections} idle connections were still open when the \
             target's memory was read: the server closed the others, so the figure is not \
             memory with {connections} connections; memory per connection needs a server \
             that keeps idle connections open"
        )));
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
