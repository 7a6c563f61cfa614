//! One trial: start the target fresh, wait for health, take a baseline,
//! warm up, measure (load and resource sampling over the same window), idle,
//! check for leaks, stop and reap.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use corobench_load::{Endpoint, LoadConfig, LoadRun, ProgressSnapshot, RequestTemplate, StopAfter};
use corobench_model::{LoadReport, TaskCounts, TrialFlag, TrialRecord, TrialStatus};
use corobench_sampler::{DEFAULT_INTERVAL, Sampler};
use corobench_spec::PlannedScenario;
use corobench_target::{LaunchOptions, RunningTarget};

use super::Bench;
use super::leak::{self, Footprint};
use super::stats_probe;

/// Lines of a target's stderr kept with a failed trial.
const STDERR_TAIL_LINES: usize = 20;

/// How a trial ended.
#[derive(Debug)]
pub enum TrialOutcome {
    /// Measured, or failed for a reason worth storing.
    Done(Box<TrialRecord>),
    /// Ctrl-C arrived: nothing of this trial is kept.
    Interrupted,
}

/// What the presenter is told while a trial runs.
#[derive(Clone, Copy, Debug)]
pub enum Phase {
    Starting,
    WarmingUp,
    Measuring(ProgressSnapshot),
    Stopping,
}

/// Runs one trial of `scenario`.
pub fn run(
    bench: &Bench,
    scenario: &PlannedScenario,
    slot: (u32, u32),
    sequence: u32,
    show: &dyn Fn(Phase),
) -> TrialOutcome {
    let started_at_unix_ms = unix_ms();
    let record = |status, failure: Option<String>| TrialRecord {
        scenario_index: slot.0,
        trial_index: slot.1,
        sequence,
        status,
        failure,
        started_at_unix_ms,
        load: None,
        resources: None,
        resource_series: Vec::new(),
        tasks: TaskCounts::default(),
        flags: Vec::new(),
    };
    show(Phase::Starting);
    let mut target = match start(bench, scenario) {
        Ok(target) => target,
        Err(why) => return TrialOutcome::Done(Box::new(record(TrialStatus::Failed, Some(why)))),
    };
    let before = footprint(&target);
    let measured = match measure(bench, scenario, &target, show) {
        Ok(Some(measured)) => measured,
        Ok(None) => return TrialOutcome::Interrupted,
        Err(why) => {
            return TrialOutcome::Done(Box::new(failed_with_target(
                record(TrialStatus::Failed, None),
                &mut target,
                &why,
            )));
        }
    };
    show(Phase::Stopping);
    std::thread::sleep(scenario.measurement.idle);
    if bench.stop.load(Ordering::Relaxed) {
        return TrialOutcome::Interrupted;
    }
    if target.exit_status().is_some() {
        let why = "the target exited during the measurement";
        return TrialOutcome::Done(Box::new(failed_with_target(
            record(TrialStatus::Failed, None),
            &mut target,
            why,
        )));
    }
    let after = settled_footprint(&target, &before, &measured.series.samples);
    let mut trial = record(TrialStatus::Ok, None);
    trial.flags = flags(&measured.report, &before, &after, &measured.series.samples);
    trial.tasks = TaskCounts {
        before: before.tasks,
        peak: measured.peak_tasks,
        after: after.tasks,
    };
    trial.resources = Some(measured.series.summary);
    trial.resource_series = measured.series.samples;
    trial.load = Some(measured.report);
    if let Err(error) = target.stop() {
        trial.flags.push(TrialFlag::Leak {
            what: format!("the target did not stop cleanly: {error}"),
        });
    }
    TrialOutcome::Done(Box::new(trial))
}

fn start(bench: &Bench, scenario: &PlannedScenario) -> Result<RunningTarget, String> {
    let built = bench
        .built
        .get(&scenario.target)
        .ok_or_else(|| format!("{} was not built", scenario.target))?;
    let options = LaunchOptions {
        parameters: scenario.parameters.clone(),
        cpus: Some(bench.server_cpus.clone()),
        data_dir: bench.data_dir.clone(),
        upload_dir: bench.work_root.join("uploads"),
        database_url: if scenario.needs_database {
            bench.database_url.clone()
        } else {
            None
        },
        port: None,
        work_dir: None,
    };
    let mut target = built
        .launch(&options)
        .map_err(|e| format!("{} did not start: {e}", scenario.target))?;
    target
        .wait_healthy(built.manifest.run.ready_timeout())
        .map_err(|e| e.to_string())?;
    Ok(target)
}

/// A failed trial with the target's exit status and the tail of its stderr.
fn failed_with_target(
    mut trial: TrialRecord,
    target: &mut RunningTarget,
    why: &str,
) -> TrialRecord {
    let status = target
        .exit_status()
        .map_or_else(|| "still running".to_string(), |s| s.to_string());
    let tail = target.stderr_tail(STDERR_TAIL_LINES);
    trial.failure = Some(format!(
        "{why} (target: {status}); last lines of its stderr:\n{tail}"
    ));
    trial
}

/// The measured window's results.
struct Measured {
    report: LoadReport,
    series: corobench_sampler::ResourceSeries,
    peak_tasks: Option<u64>,
}

/// Warm-up and measurement in one load run, so the measured window finds its
/// connections open and warm, with the sampler covering exactly that window:
/// it starts when every generator thread has left its warm-up and stops
/// `duration` later, so neither connection set-up nor tear-down dilutes the
/// server's CPU figure. `Ok(None)` when interrupted.
fn measure(
    bench: &Bench,
    scenario: &PlannedScenario,
    target: &RunningTarget,
    show: &dyn Fn(Phase),
) -> Result<Option<Measured>, String> {
    let m = &scenario.measurement;
    let pgid =
        u32::try_from(target.pgid()).map_err(|_| "the target has no process group".to_string())?;
    let run = LoadRun::prepare(load_config(bench, scenario, target)?)
        .map_err(|e| format!("the load could not start: {e}"))?;
    let (progress, cancel) = (run.progress(), run.cancel_flag());
    show(Phase::WarmingUp);
    std::thread::scope(|scope| {
        let worker = scope.spawn(move || run.run());
        // Leaving early on an error must not leave the generator running.
        let _cancel_on_exit = CancelOnDrop(Arc::clone(&cancel));
        let mut window: Option<Window> = None;
        let mut last_shown = Instant::now();
        while !worker.is_finished() {
            std::thread::sleep(WINDOW_POLL);
            if bench.stop.load(Ordering::Relaxed) {
                cancel.store(true, Ordering::Relaxed);
            }
            let snapshot = progress.snapshot();
            if window.is_none() && snapshot.measuring {
                let sampler = start_sampler(bench, pgid)?;
                let peak = scope.spawn(|| {
                    sleep_unless_stopped(bench, m.duration / 2);
                    stats_probe::tasks(target.addr())
                });
                window = Some(Window {
                    started: Instant::now(),
                    sampler: Some(sampler),
                    series: None,
                    peak,
                });
            }
            if let Some(w) = window
                .as_mut()
                .filter(|w| w.started.elapsed() >= m.duration)
            {
                w.close()?;
            }
            if snapshot.measuring && last_shown.elapsed() >= PROGRESS_EVERY {
                show(Phase::Measuring(snapshot));
                last_shown = Instant::now();
            }
        }
        let report = worker
            .join()
            .map_err(|_| "the load generator panicked".to_string())?
            .map_err(|e| e.to_string());
        let Some(mut window) = window else {
            if bench.stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            return report.and(Err("the load ended before its measured window began".into()));
        };
        // Ended early (interrupted, or the generator gave up): stop sampling now.
        window.close()?;
        let peak_tasks = window.peak.join().ok().flatten();
        if bench.stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        Ok(Some(Measured {
            report: report?,
            series: window.series.unwrap_or_default(),
            peak_tasks,
        }))
    })
}

/// Sets the generator's cancel flag when dropped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// How often the measuring thread looks at the generator's progress: the
/// sampled window starts at most this late.
const WINDOW_POLL: Duration = Duration::from_millis(1);

/// How often the presenter is told the live figures.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// The measured window as the runner sees it.
struct Window<'scope> {
    started: Instant,
    /// Running until the window's end.
    sampler: Option<corobench_sampler::SamplerHandle>,
    /// What the sampler saw, once it is stopped.
    series: Option<corobench_sampler::ResourceSeries>,
    /// `/stats` tasks read halfway through the window.
    peak: std::thread::ScopedJoinHandle<'scope, Option<u64>>,
}

impl Window<'_> {
    /// Stops the sampler and keeps its series; later calls do nothing.
    fn close(&mut self) -> Result<(), String> {
        if let Some(sampler) = self.sampler.take() {
            let series = sampler
                .stop()
                .map_err(|e| format!("sampling the target failed: {e}"))?;
            self.series = Some(series);
        }
        Ok(())
    }
}

/// Starts the sampler from a thread pinned beside the generator: the
/// sampling thread inherits its CPUs, away from the server's.
fn start_sampler(bench: &Bench, pgid: u32) -> Result<corobench_sampler::SamplerHandle, String> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let _ = bench.generator_set.apply_to_current_thread();
                Sampler::start(pgid, DEFAULT_INTERVAL)
            })
            .join()
    })
    .map_err(|_| "the sampler could not start".to_string())?
    .map_err(|e| format!("cannot sample the target: {e}"))
}

/// The generator's configuration for one trial: warm-up then the measured
/// window, pinned to the generator CPUs.
fn load_config(
    bench: &Bench,
    scenario: &PlannedScenario,
    target: &RunningTarget,
) -> Result<LoadConfig, String> {
    let url = format!("http://{}{}", target.addr(), scenario.workload.path);
    let m = &scenario.measurement;
    Ok(LoadConfig {
        endpoint: Endpoint::from_url(&url).map_err(|e| e.to_string())?,
        request: RequestTemplate {
            method: scenario.workload.method.clone(),
            headers: scenario.workload.headers.clone(),
            body: bench
                .bodies
                .get(&scenario.workload.name)
                .cloned()
                .unwrap_or_default(),
        },
        threads: m.generator_threads,
        schedule: scenario.schedule,
        stop: StopAfter::Duration(m.duration),
        warmup: m.warmup,
        timeout: m.timeout,
        cpus: Some(bench.generator_cpus.clone()),
        backend: bench.backend,
    })
}

fn sleep_unless_stopped(bench: &Bench, total: Duration) {
    let end = Instant::now() + total;
    while Instant::now() < end && !bench.stop.load(Ordering::Relaxed) {
        std::thread::sleep(
            Duration::from_millis(50).min(end.saturating_duration_since(Instant::now())),
        );
    }
}

/// How long a target may take, after the idle time, to come back to its
/// baseline before it is flagged: pools retire idle workers on a timer
/// (ants after 1 s), which is not a leak.
const LEAK_GRACE: Duration = Duration::from_secs(3);

/// The footprint once it is back near the baseline, or after the grace time.
fn settled_footprint(
    target: &RunningTarget,
    before: &Footprint,
    window: &[corobench_model::ResourceSample],
) -> Footprint {
    let deadline = Instant::now() + LEAK_GRACE;
    loop {
        let after = footprint(target);
        if leak::check(before, &after, window).is_empty() || Instant::now() >= deadline {
            return after;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn footprint(target: &RunningTarget) -> Footprint {
    let pgid = u32::try_from(target.pgid()).unwrap_or(0);
    let tree = corobench_sampler::snapshot(pgid).ok();
    Footprint {
        tasks: stats_probe::tasks(target.addr()),
        processes: tree.as_ref().map_or(0, |t| t.processes),
        threads: tree.as_ref().map_or(0, |t| t.threads),
        rss_bytes: tree.as_ref().map_or(0, |t| t.rss_bytes),
    }
}

fn flags(
    report: &LoadReport,
    before: &Footprint,
    after: &Footprint,
    window: &[corobench_model::ResourceSample],
) -> Vec<TrialFlag> {
    let mut flags = Vec::new();
    if report.generator_bound() {
        flags.push(TrialFlag::GeneratorBound {
            utilization: report.generator.utilization,
        });
    }
    if report.errors.total() > 0 {
        flags.push(TrialFlag::Errors {
            error_rate: report.error_rate,
        });
    }
    flags.extend(leak::check(before, after, window));
    flags
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
