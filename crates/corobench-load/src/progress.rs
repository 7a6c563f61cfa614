//! Live counters a presenter can read while the run goes on. Each generator
//! thread is the only writer of its own slot and stores its running totals
//! once per event-loop turn: no locks, no shared cache line per request.
//! A live view may ask for more (see [`crate::live`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::live::{LiveSlots, LiveSnapshot};

/// Totals of one generator thread.
#[derive(Debug, Default)]
pub struct ThreadProgress {
    responses: AtomicU64,
    errors: AtomicU64,
    measuring: AtomicBool,
}

/// The live view of a running load.
#[derive(Debug)]
pub struct Progress {
    threads: Vec<ThreadProgress>,
    /// Present when a live view asked for the histogram and statuses.
    live: Option<LiveSlots>,
}

/// A snapshot of [`Progress`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProgressSnapshot {
    pub responses: u64,
    pub errors: u64,
    /// False while any thread is still warming up.
    pub measuring: bool,
}

impl Progress {
    #[must_use]
    pub fn new(threads: usize) -> Self {
        Self {
            threads: (0..threads).map(|_| ThreadProgress::default()).collect(),
            live: None,
        }
    }

    /// Counters, and a slot per thread for a live view's histogram and statuses.
    #[must_use]
    pub fn with_live_view(threads: usize) -> Self {
        Self {
            live: Some(LiveSlots::new(threads)),
            ..Self::new(threads)
        }
    }

    /// The window so far as the threads last published it; `None` unless
    /// made [`Self::with_live_view`].
    #[must_use]
    pub fn live(&self) -> Option<LiveSnapshot> {
        self.live.as_ref().map(LiveSlots::snapshot)
    }

    pub(crate) fn live_slots(&self) -> Option<&LiveSlots> {
        self.live.as_ref()
    }

    /// Sums every thread's latest totals.
    #[must_use]
    pub fn snapshot(&self) -> ProgressSnapshot {
        let mut snapshot = ProgressSnapshot {
            measuring: true,
            ..ProgressSnapshot::default()
        };
        for t in &self.threads {
            snapshot.responses += t.responses.load(Ordering::Relaxed);
            snapshot.errors += t.errors.load(Ordering::Relaxed);
            snapshot.measuring &= t.measuring.load(Ordering::Relaxed);
        }
        snapshot
    }

    pub(crate) fn publish(&self, thread: usize, responses: u64, errors: u64, measuring: bool) {
        let slot = &self.threads[thread];
        slot.responses.store(responses, Ordering::Relaxed);
        slot.errors.store(errors, Ordering::Relaxed);
        slot.measuring.store(measuring, Ordering::Relaxed);
    }
}
