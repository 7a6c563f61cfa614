//! A trial's measured window. Warm-up and measurement are one load run, so
//! the window finds its connections open and warm; the resource sampler
//! covers exactly that window: it starts when every generator thread has
//! left its warm-up and stops `duration` later, so neither connection
//! set-up nor tear-down dilutes the server's CPU figure. Halfway through,
//! a probe reads the target's `/stats` for its peak task count.
//!
//! Three pieces, one per kind of data: [`Watch::follow`] polls the
//! generator's progress, [`Window`] owns the sampler and the probe, and
//! [`conclude`] joins what they measured.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use corobench_load::{LoadError, LoadRun, Progress};
use corobench_model::{LoadReport, TrialCounters};
use corobench_sampler::{DEFAULT_INTERVAL, ResourceSeries, Sampler, SamplerHandle};
use corobench_spec::PlannedScenario;

use super::TrialError;
use super::counters::WindowCounters;
use super::server::TrialServer;
use crate::events::{Phase, RunEvent, RunObserver};
use crate::generator;
use crate::prepare::TrialEnvironment;
use crate::stats_probe::StatsRoute;
use crate::trial::sleep_unless_stopped;

/// How often the measuring thread looks at the generator's progress: the
/// sampled window starts at most this late.
const WINDOW_POLL: Duration = Duration::from_millis(1);

/// How often the observer is told the live figures.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// A pause of the measuring thread this long means corobench itself was not
/// running (stopped with Ctrl-Z or SIGSTOP, or starved of CPU): its
/// generator threads were not either, so the trial's figures are not the
/// target's. A thread that sleeps 1 ms is never late by this much otherwise.
const STALL_LIMIT: Duration = Duration::from_millis(250);

/// The measured window's results.
#[derive(Debug)]
pub(super) struct Measured {
    pub(super) report: LoadReport,
    pub(super) series: ResourceSeries,
    pub(super) peak_tasks: Option<u64>,
    /// Whether the server's processes were sampled (not when only the URL
    /// of an already running server is known).
    pub(super) sampled: bool,
    /// What the kernel counted for the server and the generator.
    pub(super) counters: TrialCounters,
}

/// Warms up and measures `target`; `Ok(None)` when interrupted.
pub(super) fn measure(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    (target, stats): (&TrialServer, Option<&StatsRoute>),
    observer: &dyn RunObserver,
) -> Result<Option<Measured>, TrialError> {
    let pgid = target
        .pgid()
        .map(|pgid| u32::try_from(pgid).map_err(|_| TrialError::NoProcessGroup))
        .transpose()?;
    let trust = target.trust(env);
    let config = generator::load_config(env, scenario, target.addr(), &trust)
        .map_err(TrialError::Endpoint)?;
    let run = LoadRun::prepare(config).map_err(TrialError::LoadStart)?;
    let watch = Watch {
        env,
        duration: scenario.measurement.duration,
        pgid,
        stats: stats.cloned(),
        progress: run.progress(),
        cancel: run.cancel_flag(),
        observer,
    };
    observer.on(RunEvent::TrialPhase(Phase::WarmingUp));
    std::thread::scope(|scope| {
        let worker = scope.spawn(move || run.run());
        // Leaving early on an error must not leave the generator running.
        let _cancel_on_exit = CancelOnDrop(Arc::clone(&watch.cancel));
        let followed = watch.follow(scope, &worker)?;
        let report = worker.join().map_err(|_| TrialError::GeneratorPanicked)?;
        conclude(env, followed, report)
    })
}

/// What the measuring thread watches while the generator runs.
struct Watch<'a> {
    env: &'a TrialEnvironment,
    duration: Duration,
    /// The server's process group; `None`: not sampled.
    pgid: Option<u32>,
    /// Where the contract's `/stats` is asked for tasks; `None` for a
    /// user's server, which has no such endpoint.
    stats: Option<StatsRoute>,
    progress: Arc<Progress>,
    cancel: Arc<AtomicBool>,
    observer: &'a dyn RunObserver,
}

impl Watch<'_> {
    /// Polls the generator until it ends: opens the window when every
    /// thread is measuring, closes it `duration` later, passes Ctrl-C on
    /// and tells the observer the live figures.
    fn follow<'scope, T>(
        &self,
        scope: &'scope Scope<'scope, '_>,
        worker: &ScopedJoinHandle<'scope, T>,
    ) -> Result<Followed<'scope>, TrialError> {
        let mut window: Option<Window<'scope>> = None;
        let mut last_shown = Instant::now();
        let mut longest_pause = Duration::ZERO;
        while !worker.is_finished() {
            let asleep = Instant::now();
            std::thread::sleep(WINDOW_POLL);
            longest_pause = longest_pause.max(asleep.elapsed().saturating_sub(WINDOW_POLL));
            if self.env.stop.load(Ordering::Relaxed) {
                self.cancel.store(true, Ordering::Relaxed);
            }
            let snapshot = self.progress.snapshot();
            if window.is_none() && snapshot.measuring {
                window = Some(Window::open(scope, self)?);
            }
            if let Some(open) = window
                .as_mut()
                .filter(|w| w.started.elapsed() >= self.duration)
            {
                open.close()?;
            }
            if snapshot.measuring && last_shown.elapsed() >= PROGRESS_EVERY {
                self.observer
                    .on(RunEvent::TrialPhase(Phase::Measuring(snapshot)));
                last_shown = Instant::now();
            }
        }
        Ok(Followed {
            window,
            longest_pause,
        })
    }
}

/// What the measuring thread saw while the generator ran.
struct Followed<'scope> {
    /// `None` when the generator never reported every thread measuring.
    window: Option<Window<'scope>>,
    /// The longest time the measuring thread was not running beyond its
    /// polling interval: corobench's own stall, if any.
    longest_pause: Duration,
}

/// The measured window as the runner sees it.
struct Window<'scope> {
    started: Instant,
    /// Running until the window's end.
    sampler: Option<SamplerHandle>,
    /// What the sampler saw, once it is stopped.
    series: Option<ResourceSeries>,
    /// Counting until the window's end.
    counters: Option<WindowCounters>,
    /// What they counted, once read.
    counted: Option<TrialCounters>,
    /// `/stats` tasks read halfway through the window.
    peak: ScopedJoinHandle<'scope, Option<u64>>,
}

impl<'scope> Window<'scope> {
    /// Starts the sampler and the halfway probe.
    fn open(scope: &'scope Scope<'scope, '_>, watch: &Watch<'_>) -> Result<Self, TrialError> {
        let counters = WindowCounters::attach(watch.pgid, Arc::clone(&watch.progress));
        let sampler = watch
            .pgid
            .map(|pgid| start_sampler(watch.env, pgid))
            .transpose()?;
        let (stop, half) = (Arc::clone(&watch.env.stop), watch.duration / 2);
        let stats = watch.stats.clone();
        let peak = scope.spawn(move || {
            sleep_unless_stopped(&stop, half);
            stats.and_then(|route| route.tasks())
        });
        Ok(Self {
            started: Instant::now(),
            sampler,
            series: None,
            counters: Some(counters),
            counted: None,
            peak,
        })
    }

    /// Reads the counters and stops the sampler, keeping what they measured;
    /// later calls do nothing.
    fn close(&mut self) -> Result<(), TrialError> {
        if let Some(counters) = self.counters.take() {
            self.counted = Some(counters.read());
        }
        if let Some(sampler) = self.sampler.take() {
            self.series = Some(
                sampler
                    .stop()
                    .map_err(|e| TrialError::Sampling(e.to_string()))?,
            );
        }
        Ok(())
    }
}

/// Joins what the generator, the sampler and the probe measured.
fn conclude(
    env: &TrialEnvironment,
    followed: Followed<'_>,
    report: Result<LoadReport, LoadError>,
) -> Result<Option<Measured>, TrialError> {
    let interrupted = || env.stop.load(Ordering::Relaxed);
    if followed.longest_pause >= STALL_LIMIT && !interrupted() {
        // Checked first: a stall across the window's start also hides the
        // start from the poll loop, and the target is not to blame.
        return Err(TrialError::Stalled {
            pause: followed.longest_pause,
        });
    }
    let Some(mut window) = followed.window else {
        if interrupted() {
            return Ok(None);
        }
        report.map_err(TrialError::Load)?;
        return Err(TrialError::NoWindow);
    };
    // Ended early (interrupted, or the generator gave up): stop sampling now.
    window.close()?;
    let peak_tasks = window.peak.join().ok().flatten();
    if interrupted() {
        return Ok(None);
    }
    Ok(Some(Measured {
        report: report.map_err(TrialError::Load)?,
        sampled: window.series.is_some(),
        series: window.series.unwrap_or_default(),
        peak_tasks,
        counters: window.counted.unwrap_or_default(),
    }))
}

/// Sets the generator's cancel flag when dropped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Starts the sampler from a thread pinned beside the generator: the
/// sampling thread inherits its CPUs, away from the server's.
fn start_sampler(env: &TrialEnvironment, pgid: u32) -> Result<SamplerHandle, TrialError> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let _ = env.generator_set.apply_to_current_thread();
                Sampler::start(pgid, DEFAULT_INTERVAL)
            })
            .join()
    })
    .map_err(|_| TrialError::SamplerStart("the sampler could not start".to_string()))?
    .map_err(|e| TrialError::SamplerStart(format!("cannot sample the target: {e}")))
}
