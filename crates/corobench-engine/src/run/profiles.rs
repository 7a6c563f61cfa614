//! `[run] profile`: after the measured trials, one profile trial per
//! scenario ([`crate::trial::profile`]), on this machine, each stored as it
//! ends (idle workloads send no load and are not profiled). A profile that
//! cannot be taken is stored with its reason; the run goes on and succeeds
//! as its trials do.

use corobench_model::ProfileOutcome;
use corobench_store::Store;

use super::{RunParts, runnable};
use crate::error::EngineError;
use crate::events::RunObserver;
use crate::local::ThisMachine;

/// Profiles every runnable scenario that has no profile yet (a resumed run
/// keeps those it has); stops at Ctrl-C.
///
/// # Errors
/// The store refused a profile.
pub(super) fn take(
    run: &RunParts<'_>,
    store: &mut Store,
    observer: &dyn RunObserver,
) -> Result<(), EngineError> {
    let stored = |what| {
        move |source| EngineError::Store {
            what,
            source: Box::new(source),
        }
    };
    let done: Vec<u32> = store
        .load_run(run.run_id)
        .map_err(stored("reading the run's stored profiles"))?
        .profiles
        .iter()
        .map(|p| p.scenario_index)
        .collect();
    let here = ThisMachine {
        env: &run.prepared.env,
    };
    let runnable = runnable(run.plan, run.prepared);
    for &index in runnable.iter().filter(|i| !done.contains(i)) {
        let scenario = &run.plan.scenarios[index as usize];
        // An idle workload sends no load: there is no CPU to profile.
        if scenario.workload.idle {
            continue;
        }
        observer.notice(&format!("profiling {} (perf record)", scenario.key));
        let Some(profile) = crate::trial::profile(&here, scenario, observer) else {
            return Ok(());
        };
        if let ProfileOutcome::Skipped { reason } = &profile.outcome {
            observer.notice(&format!("no profile of {}: {reason}", scenario.key));
        }
        store
            .record_profile(run.run_id, &profile)
            .map_err(stored("storing a profile"))?;
    }
    Ok(())
}
