//! `[run] profile` / `run --profile`: after the measured trials, one
//! profile trial per scenario ([`corobench_engine::profile_trial`]), each
//! stored as it ends (idle workloads send no load and are not profiled).
//! A profile that cannot be taken is stored with its reason; the run goes
//! on and succeeds as its trials do.

use anyhow::Context as _;
use corobench_engine::{PreparedRun, RunObserver, profile_trial};
use corobench_model::ProfileOutcome;
use corobench_store::Store;

/// Profiles every runnable scenario that has no profile yet (a resumed run
/// keeps those it has); stops at Ctrl-C.
///
/// # Errors
/// The store refused a profile.
pub(super) fn take(
    plan: &corobench_spec::Plan,
    run_id: &str,
    runnable: &[u32],
    (store, prepared): (&mut Store, &PreparedRun),
    observer: &dyn RunObserver,
) -> anyhow::Result<()> {
    let done: Vec<u32> = store
        .load_run(run_id)
        .context("reading the run's stored profiles")?
        .profiles
        .iter()
        .map(|p| p.scenario_index)
        .collect();
    for &index in runnable.iter().filter(|i| !done.contains(i)) {
        let scenario = &plan.scenarios[index as usize];
        // An idle workload sends no load: there is no CPU to profile.
        if scenario.workload.idle {
            continue;
        }
        observer.notice(&format!("profiling {} (perf record)", scenario.key));
        let Some(profile) = profile_trial::run(&prepared.env, scenario, observer) else {
            return Ok(());
        };
        if let ProfileOutcome::Skipped { reason } = &profile.outcome {
            observer.notice(&format!("no profile of {}: {reason}", scenario.key));
        }
        store
            .record_profile(run_id, &profile)
            .context("storing a profile")?;
    }
    Ok(())
}
