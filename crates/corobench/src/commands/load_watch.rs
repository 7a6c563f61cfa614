//! `corobench load` while the load runs: the generator on a worker thread,
//! this thread following it (the window's kernel counters, Ctrl-C) and
//! showing its progress, as the live view or as one progress line.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use corobench_live::{LoadView, Painter};
use corobench_load::{LoadRun, ProgressSnapshot};
use corobench_model::LoadReport;

use super::load_counters::{self, WindowCounters};
use crate::exit::{self, Exit};
use crate::output::progress::LiveLine;

/// How often this thread looks at the load when no counters are followed:
/// it shares the generator's CPUs.
const PROGRESS_POLL: Duration = Duration::from_millis(100);

/// What shows the load's progress.
enum Shown {
    /// The live view, drawn by its own thread from the generator's snapshots.
    View(Painter<LoadView>),
    /// One line on stderr (hidden when stderr is not a terminal), fed here.
    Line {
        line: LiveLine,
        last: ProgressSnapshot,
        last_at: Instant,
    },
}

impl Shown {
    /// The live view for `view` if one was asked for and the terminal can
    /// be taken; the progress line otherwise.
    fn start(view: Option<LoadView>, load: &LoadRun) -> Self {
        if let Some(view) = view {
            if let Ok(painter) = Painter::start(view.following(load.progress())) {
                return Self::View(painter);
            }
        }
        Self::Line {
            line: LiveLine::new(),
            last: load.progress().snapshot(),
            last_at: Instant::now(),
        }
    }

    /// The line's rate, twice a second; the view draws itself.
    fn update(&mut self, now: ProgressSnapshot) {
        if let Self::Line {
            line,
            last,
            last_at,
        } = self
        {
            let seconds = last_at.elapsed().as_secs_f64();
            if seconds >= 0.5 {
                let per_s = now.responses.saturating_sub(last.responses) as f64 / seconds;
                line.load(!now.measuring, per_s, now.responses, now.errors);
                (*last, *last_at) = (now, Instant::now());
            }
        }
    }

    fn stopping(&self) {
        if let Self::View(painter) = self {
            painter.update(|view, _| view.stopping());
        }
    }

    /// Gives the terminal back, or removes the line.
    fn finish(self) {
        match self {
            Self::View(mut painter) => painter.close(),
            Self::Line { line, .. } => line.finish(),
        }
    }
}

/// Runs the load on a worker thread while this thread shows live progress
/// (in `view` when given) and turns Ctrl-C into an early, orderly end.
/// With `counting` (the window's length, if timed), the report carries the
/// generator's kernel counters over its window.
pub(super) fn run_with_progress(
    load: LoadRun,
    view: Option<LoadView>,
    counting: Option<Option<Duration>>,
    stop: &AtomicBool,
) -> anyhow::Result<LoadReport> {
    let mut counters = counting.map(|_| WindowCounters::Waiting);
    let progress = load.progress();
    let cancel = load.cancel_flag();
    let mut shown = Shown::start(view, &load);
    // Whether Ctrl-C came before the measured window opened (during a
    // --start-at wait or the warm-up): then nothing was measured.
    let mut stopped_before_window = false;
    let report = std::thread::scope(|scope| {
        let worker = scope.spawn(move || load.run());
        // The progress needs a look twice a second; only following the
        // window for the counters needs one every few milliseconds.
        let poll = if counters.is_some() {
            load_counters::POLL
        } else {
            PROGRESS_POLL
        };
        while !worker.is_finished() {
            std::thread::sleep(poll);
            if let Some(counters) = counters.as_mut() {
                counters.follow(progress.snapshot(), counting.flatten());
            }
            if stop.load(Ordering::Relaxed) && !cancel.swap(true, Ordering::Relaxed) {
                stopped_before_window = !progress.snapshot().measuring;
                shown.stopping();
            }
            shown.update(progress.snapshot());
        }
        worker
            .join()
            .map_err(|_| anyhow::anyhow!("the load thread panicked"))
    });
    shown.finish();
    let mut report = report??;
    report.counters = counters.and_then(|c| c.finish(progress.snapshot()));
    if stopped_before_window {
        return Err(exit::Failure {
            exit: Exit::Interrupted,
            message: "interrupted before the measured window opened (while waiting for \
                      --start-at or warming up): nothing was measured, so there is no report"
                .to_owned(),
        }
        .into());
    }
    if stop.load(Ordering::Relaxed) {
        eprintln!(
            "interrupted: the report covers the {:.1}s measured before Ctrl-C",
            report.elapsed_s
        );
    }
    Ok(report)
}
