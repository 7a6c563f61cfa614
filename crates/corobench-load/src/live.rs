//! What a live view sees of a running load beyond the counters of
//! [`crate::Progress`]: the latency histogram so far, the status classes,
//! the errors by kind and the connections open.
//!
//! Only when a view asks for it ([`crate::LoadRun::live_view`]): each
//! generator thread then copies its own measurements into its slot at most
//! once every [`LIVE_INTERVAL`], from its event loop's turn, never per
//! request. The copy takes the slot with `try_lock`: a thread never waits
//! for the view (a slot the view is reading is tried again on a later
//! turn), and the view holds a slot only while it adds it up.

use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use corobench_model::{ErrorCounts, LatencyHistogram, StatusCounts};

use crate::clock::NS_PER_MS;
use crate::recorder::Recorder;

/// How often a generator thread publishes for a live view at most.
pub const LIVE_INTERVAL: Duration = Duration::from_nanos(LIVE_INTERVAL_NS);

/// [`LIVE_INTERVAL`] as the event loops count: four times a second.
pub(crate) const LIVE_INTERVAL_NS: u64 = 250 * NS_PER_MS;

/// The measured window so far, all threads together.
#[derive(Clone, Debug, Default)]
pub struct LiveSnapshot {
    /// Latency of every response in the window so far (from the intended
    /// send time in an open loop).
    pub latency: LatencyHistogram,
    pub status: StatusCounts,
    pub errors: ErrorCounts,
    pub responses: u64,
    /// Connections established and not closed, when each thread last looked.
    pub open_connections: u64,
    /// How many generator threads have published at least once.
    pub threads_reporting: usize,
}

/// One thread's latest copy.
#[derive(Debug, Default)]
struct Slot {
    published: bool,
    latency: LatencyHistogram,
    status: StatusCounts,
    errors: ErrorCounts,
    responses: u64,
    open_connections: u64,
}

/// One slot per generator thread; each thread is its slot's only writer.
#[derive(Debug)]
pub(crate) struct LiveSlots {
    slots: Box<[Mutex<Slot>]>,
}

impl LiveSlots {
    pub(crate) fn new(threads: usize) -> Self {
        Self {
            slots: (0..threads).map(|_| Mutex::new(Slot::default())).collect(),
        }
    }

    /// Copies `recorder`'s window so far into `thread`'s slot, unless the
    /// view is reading it; returns whether it did.
    pub(crate) fn try_publish(
        &self,
        thread: usize,
        recorder: &Recorder,
        open_connections: u64,
    ) -> bool {
        let mut slot = match self.slots[thread].try_lock() {
            Ok(slot) => slot,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return false,
        };
        slot.published = true;
        // Reset and add: the slot's counts array is reused, never reallocated.
        slot.latency.reset();
        slot.latency.add(&recorder.latency);
        slot.status = recorder.status;
        slot.errors = recorder.errors;
        slot.responses = recorder.responses;
        slot.open_connections = open_connections;
        true
    }

    /// Adds up every thread's latest copy.
    pub(crate) fn snapshot(&self) -> LiveSnapshot {
        let mut total = LiveSnapshot::default();
        for slot in &self.slots {
            let slot = lock(slot);
            if !slot.published {
                continue;
            }
            total.threads_reporting += 1;
            total.latency.add(&slot.latency);
            total.status.add(&slot.status);
            total.errors.add(&slot.errors);
            total.responses += slot.responses;
            total.open_connections += slot.open_connections;
        }
        total
    }
}

/// A slot, also one whose writer panicked (its copy is still whole enough to show).
fn lock(slot: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    slot.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder_with(latencies_us: &[u64], status: u16) -> Recorder {
        let mut recorder = Recorder::new(false, (false, false, false), 1);
        recorder.begin_window(0);
        for &us in latencies_us {
            recorder.response(status, 0, 0, us * 1_000);
        }
        recorder
    }

    #[test]
    fn the_snapshot_adds_up_the_threads_that_published() {
        let slots = LiveSlots::new(3);
        assert!(slots.try_publish(0, &recorder_with(&[100, 200], 200), 4));
        assert!(slots.try_publish(2, &recorder_with(&[300], 503), 2));
        let live = slots.snapshot();
        assert_eq!(live.threads_reporting, 2);
        assert_eq!(live.responses, 3);
        assert_eq!(live.latency.count(), 3);
        assert_eq!((live.status.success, live.status.server_error), (2, 1));
        assert_eq!(live.errors.status_5xx, 1);
        assert_eq!(live.open_connections, 6);
    }

    #[test]
    fn a_new_copy_replaces_the_old_one() {
        let slots = LiveSlots::new(1);
        assert!(slots.try_publish(0, &recorder_with(&[100, 200], 200), 1));
        assert!(slots.try_publish(0, &recorder_with(&[100, 200, 300], 200), 1));
        let live = slots.snapshot();
        assert_eq!((live.responses, live.latency.count()), (3, 3));
    }

    #[test]
    fn a_slot_being_read_is_skipped_not_waited_for() {
        let slots = LiveSlots::new(1);
        let reading = lock(&slots.slots[0]);
        assert!(!slots.try_publish(0, &recorder_with(&[100], 200), 1));
        drop(reading);
        assert!(slots.try_publish(0, &recorder_with(&[100], 200), 1));
    }
}
