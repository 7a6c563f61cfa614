//! The profile trial (`[run] profile`): after a scenario's measured trials,
//! one more trial of it, run like the others (a fresh server on the server
//! CPUs, warm-up, window), with `perf record` attached to the server's
//! process tree from the end of the warm-up until the load stops. Its load
//! figures are thrown away: only the folded stacks are kept, in the store's
//! `profiles` table, never among the trials, so the measured trials are
//! neither perturbed by `perf` nor mixed with this one.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use corobench_model::{ProfileOutcome, ProfileRecord};
use corobench_profile::{FREQUENCY_HZ, PERF_PROGRAM, ProfileError, Recording};
use corobench_spec::PlannedScenario;

use crate::events::RunObserver;
use crate::prepare::TrialEnvironment;
use crate::server::TrialServer;
use crate::trial::start;
use crate::wall_clock::unix_ms;
use crate::window;

/// The environment variable naming the `perf` program to run (default:
/// `perf` on the PATH).
pub const PERF_VARIABLE: &str = "COROBENCH_PERF";

/// Takes the profile of `scenario`; `None` when Ctrl-C interrupted it.
pub fn run(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    observer: &dyn RunObserver,
) -> Option<ProfileRecord> {
    let started_at_unix_ms = unix_ms();
    let outcome = match profile(env, scenario, observer) {
        Ok(Some(outcome)) => outcome,
        Ok(None) => return None,
        Err(reason) => ProfileOutcome::Skipped { reason },
    };
    Some(ProfileRecord {
        scenario_index: scenario.index,
        frequency_hz: FREQUENCY_HZ,
        started_at_unix_ms,
        outcome,
    })
}

fn profile(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    observer: &dyn RunObserver,
) -> Result<Option<ProfileOutcome>, String> {
    if scenario.program.is_some() {
        return Err(
            "a program target runs to completion on its own; only servers \
                    under load are profiled"
                .to_owned(),
        );
    }
    let target = start(env, scenario)
        .map(|running| TrialServer::Started(Box::new(running)))
        .map_err(|e| format!("the profile trial failed: {e}"))?;
    let dir = env.work_root.join(format!("profile-{}", scenario.index));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let profiled = profile_load(env, scenario, &target, &dir, observer);
    let _ = target.stop();
    let _ = std::fs::remove_dir_all(&dir);
    profiled
}

/// Loads `target` as a trial does, recording it after the warm-up.
fn profile_load(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    target: &TrialServer,
    dir: &Path,
    observer: &dyn RunObserver,
) -> Result<Option<ProfileOutcome>, String> {
    let pgid = target
        .pgid()
        .ok_or("the server's process group is not known")?;
    let (measured, recording) = std::thread::scope(|scope| {
        let recorder = scope.spawn(|| attach_after(env, pgid, scenario.measurement.warmup, dir));
        let measured = window::measure(env, scenario, target, observer);
        let recording = recorder
            .join()
            .unwrap_or_else(|_| Err("the profiler's thread panicked".to_owned()));
        (measured, recording)
    });
    let recording = recording?;
    match measured {
        Ok(Some(_)) => {}
        Ok(None) => return Ok(None),
        Err(e) => return Err(format!("the profile trial failed: {e}")),
    }
    let Some(recording) = recording else {
        return Ok(None);
    };
    let folded = recording.finish().map_err(|e| e.to_string())?;
    Ok(Some(ProfileOutcome::Captured {
        samples: folded.samples,
        folded_stacks: folded.text,
    }))
}

/// Waits out the warm-up, then starts `perf record` on the target's
/// process tree from a thread on the generator CPUs (perf inherits them);
/// `Ok(None)` when Ctrl-C came first.
fn attach_after(
    env: &TrialEnvironment,
    pgid: i32,
    warmup: Duration,
    dir: &Path,
) -> Result<Option<Recording>, String> {
    window::sleep_unless_stopped(&env.stop, warmup);
    if env.stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    env.generator_set
        .apply_to_current_thread()
        .map_err(|e| format!("cannot pin the profiler to the generator CPUs: {e}"))?;
    let tree = corobench_sampler::snapshot(pgid)
        .map_err(|e| format!("cannot list the target's processes: {e}"))?;
    let program = std::env::var(PERF_VARIABLE).unwrap_or_else(|_| PERF_PROGRAM.to_owned());
    Recording::start(&program, &tree.pids, dir)
        .map(Some)
        .map_err(|e: ProfileError| e.to_string())
}
