//! The middle of a profile trial on this machine: the load of a measured
//! trial, with `perf record` attached to the server's process tree from
//! the end of the warm-up until the load stops. A profiler that cannot
//! run skips the profile with its reason; a load that fails fails it.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use corobench_model::ProfileOutcome;
use corobench_profile::{PERF_PROGRAM, ProfileError, Recording};
use corobench_spec::PlannedScenario;

use super::server::TrialServer;
use super::window;
use crate::events::RunObserver;
use crate::prepare::TrialEnvironment;
use crate::trial::{Halt, sleep_unless_stopped};

/// The environment variable naming the `perf` program to run (default:
/// `perf` on the PATH).
pub const PERF_VARIABLE: &str = "COROBENCH_PERF";

/// Loads `target` as a trial does and records it after the warm-up, in a
/// scratch folder of its own.
pub(super) fn profile(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    target: &TrialServer,
    observer: &dyn RunObserver,
) -> Result<ProfileOutcome, Halt> {
    let dir = env.work_root.join(format!("profile-{}", scenario.index));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Ok(skipped(format!("cannot create {}: {e}", dir.display())));
    }
    let profiled = profile_load(env, scenario, target, &dir, observer);
    let _ = std::fs::remove_dir_all(&dir);
    profiled
}

fn skipped(reason: String) -> ProfileOutcome {
    ProfileOutcome::Skipped { reason }
}

/// The load and the recording side by side.
fn profile_load(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    target: &TrialServer,
    dir: &Path,
    observer: &dyn RunObserver,
) -> Result<ProfileOutcome, Halt> {
    let Some(pgid) = target.pgid() else {
        return Ok(skipped(
            "the server's process group is not known".to_owned(),
        ));
    };
    let (measured, recording) = std::thread::scope(|scope| {
        let recorder = scope.spawn(|| attach_after(env, pgid, scenario.measurement.warmup, dir));
        let stats = target.stats_route(env);
        let measured = window::measure(env, scenario, (target, stats.as_ref()), observer);
        let recording = recorder
            .join()
            .unwrap_or_else(|_| Err("the profiler's thread panicked".to_owned()));
        (measured, recording)
    });
    let recording = match recording {
        Ok(recording) => recording,
        Err(reason) => return Ok(skipped(reason)),
    };
    match measured {
        Ok(Some(_)) => {}
        Ok(None) => return Err(Halt::Interrupted),
        Err(e) => return Err(Halt::Failed(e.to_string())),
    }
    let Some(recording) = recording else {
        return Err(Halt::Interrupted);
    };
    Ok(match recording.finish() {
        Ok(folded) => ProfileOutcome::Captured {
            samples: folded.samples,
            folded_stacks: folded.text,
        },
        Err(e) => skipped(e.to_string()),
    })
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
    sleep_unless_stopped(&env.stop, warmup);
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
