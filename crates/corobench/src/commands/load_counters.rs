//! `corobench load --json`: the kernel counters of the generator's own
//! threads over its measured window, as a local trial counts them
//! (`corobench_sampler::ThreadCounters`), carried in the report so that a
//! trial on hosts stores the generators' side too.

use std::time::{Duration, Instant};

use corobench_load::ProgressSnapshot;
use corobench_model::{Side, SideCounters};
use corobench_sampler::ThreadCounters;

/// How often the window's opening is looked for: the counters start at
/// most this late.
pub(super) const POLL: Duration = Duration::from_millis(10);

/// The generator's counters, from the window's opening to its end.
#[derive(Debug)]
pub(super) enum WindowCounters {
    /// The warm-up (or the wait for `--start-at`) is still on.
    Waiting,
    Counting {
        counters: ThreadCounters,
        opened: Instant,
        responses_at_open: u64,
    },
    Counted(SideCounters),
}

impl WindowCounters {
    /// Attaches when every generator thread measures; reads when `window`
    /// (a timed run's length) has passed since.
    pub(super) fn follow(&mut self, now: ProgressSnapshot, window: Option<Duration>) {
        match self {
            Self::Waiting if now.measuring => {
                let threads = corobench_sampler::own_threads(corobench_load::THREAD_NAME_PREFIX);
                *self = Self::Counting {
                    counters: ThreadCounters::attach(&threads),
                    opened: Instant::now(),
                    responses_at_open: now.responses,
                };
            }
            Self::Counting { opened, .. } if window.is_some_and(|w| opened.elapsed() >= w) => {
                self.close(now);
            }
            _ => {}
        }
    }

    /// What they counted, once the load has ended; `None` when the window
    /// never opened.
    pub(super) fn finish(mut self, now: ProgressSnapshot) -> Option<SideCounters> {
        self.close(now);
        match self {
            Self::Counted(counted) => Some(counted),
            _ => None,
        }
    }

    fn close(&mut self, now: ProgressSnapshot) {
        if !matches!(self, Self::Counting { .. }) {
            return;
        }
        let Self::Counting {
            counters,
            responses_at_open,
            ..
        } = std::mem::replace(self, Self::Waiting)
        else {
            return;
        };
        let mut counted = SideCounters::of(Side::Generator, counters.read());
        counted.responses = now.responses.checked_sub(responses_at_open);
        *self = Self::Counted(counted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(responses: u64, measuring: bool) -> ProgressSnapshot {
        ProgressSnapshot {
            responses,
            errors: 0,
            measuring,
        }
    }

    #[test]
    fn they_count_from_the_window_s_opening_to_its_end_only() {
        let mut counters = WindowCounters::Waiting;
        counters.follow(at(5, false), Some(Duration::ZERO));
        assert!(matches!(counters, WindowCounters::Waiting));
        counters.follow(at(7, true), Some(Duration::ZERO));
        assert!(matches!(counters, WindowCounters::Counting { .. }));
        counters.follow(at(30, true), Some(Duration::ZERO));
        let WindowCounters::Counted(counted) = &counters else {
            panic!("{counters:?}")
        };
        assert_eq!(counted.responses, Some(23));
        // Later figures change nothing: the window has closed.
        counters.follow(at(90, true), Some(Duration::ZERO));
        let counted = counters.finish(at(99, false)).expect("counted");
        assert_eq!(counted.responses, Some(23));
        for kind in corobench_model::KernelCounter::ALL {
            let missing = counted.missing.iter().any(|m| m.counter == kind);
            assert_ne!(counted.counts.get(kind).is_some(), missing, "{counted:?}");
        }
    }

    #[test]
    fn a_window_that_never_opened_counted_nothing() {
        let mut counters = WindowCounters::Waiting;
        counters.follow(at(3, false), None);
        assert_eq!(counters.finish(at(3, false)), None);
    }
}
