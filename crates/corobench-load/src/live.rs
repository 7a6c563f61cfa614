//! What a live view sees of a running load beyond the counters of
//! [`crate::Progress`]: the latency histogram so far, the status classes,
//! the errors by kind, the connections open, and over TLS and HTTP/2 the
//! handshakes and streams.
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
use crate::recorder::{Recorder, StreamTotals};

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
    /// Over TLS: the window's handshakes so far.
    pub tls: Option<LiveHandshakes>,
    /// Over HTTP/2: the window's streams so far.
    pub http2: Option<LiveStreams>,
}

/// The TLS handshakes of the window so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveHandshakes {
    pub full: u64,
    pub resumed: u64,
}

impl LiveHandshakes {
    #[must_use]
    pub fn total(&self) -> u64 {
        self.full + self.resumed
    }

    /// The share of handshakes that resumed a session; `None` without any.
    #[must_use]
    pub fn resumed_share(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| self.resumed as f64 / total as f64)
    }

    fn add(&mut self, other: Self) {
        self.full += other.full;
        self.resumed += other.resumed;
    }
}

/// The HTTP/2 streams of the window so far. Stream resets and refusals
/// are errors ([`LiveSnapshot::errors`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LiveStreams {
    /// Streams sent and not yet answered, over all connections together,
    /// time-weighted over the window so far (as
    /// [`corobench_model::Http2Report::streams_in_flight_mean`] is per
    /// connection over the whole window).
    pub in_flight_mean: f64,
    /// GOAWAY frames received in the window.
    pub goaways: u64,
    /// The lowest SETTINGS_MAX_CONCURRENT_STREAMS a server sent (the
    /// warm-up's included); `None` when none did.
    pub server_limit: Option<u32>,
}

impl LiveStreams {
    /// One thread's streams up to `now_ns`.
    fn of_thread(streams: &StreamTotals, now_ns: u64) -> Self {
        let (area_ns, window_ns) = streams.area_so_far(now_ns);
        Self {
            in_flight_mean: if window_ns > 0 {
                area_ns as f64 / window_ns as f64
            } else {
                0.0
            },
            goaways: streams.goaways,
            server_limit: streams.server_limit,
        }
    }

    fn add(&mut self, other: Self) {
        self.in_flight_mean += other.in_flight_mean;
        self.goaways += other.goaways;
        self.server_limit = match (self.server_limit, other.server_limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
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
    tls: Option<LiveHandshakes>,
    http2: Option<LiveStreams>,
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

    /// Copies `recorder`'s window so far (as of `now_ns`) into `thread`'s
    /// slot, unless the view is reading it; returns whether it did.
    pub(crate) fn try_publish(
        &self,
        thread: usize,
        recorder: &Recorder,
        (open_connections, now_ns): (u64, u64),
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
        slot.tls = recorder.tls.as_ref().map(|tls| LiveHandshakes {
            full: tls.full,
            resumed: tls.resumed,
        });
        slot.http2 = recorder
            .streams
            .as_ref()
            .map(|streams| LiveStreams::of_thread(streams, now_ns));
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
            if let Some(tls) = slot.tls {
                total.tls.get_or_insert_default().add(tls);
            }
            if let Some(http2) = slot.http2 {
                total.http2.get_or_insert_default().add(http2);
            }
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
        assert!(slots.try_publish(0, &recorder_with(&[100, 200], 200), (4, 0)));
        assert!(slots.try_publish(2, &recorder_with(&[300], 503), (2, 0)));
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
        assert!(slots.try_publish(0, &recorder_with(&[100, 200], 200), (1, 0)));
        assert!(slots.try_publish(0, &recorder_with(&[100, 200, 300], 200), (1, 0)));
        let live = slots.snapshot();
        assert_eq!((live.responses, live.latency.count()), (3, 3));
    }

    /// A TLS thread's window at 0: `full` and `resumed` handshakes.
    fn tls_recorder(full: u64, resumed: u64) -> Recorder {
        let mut recorder = Recorder::new(false, (false, true, false), 1);
        recorder.begin_window(0);
        let agreed = crate::tls::session::Negotiated::default;
        for resumed in std::iter::repeat_n(false, full as usize)
            .chain(std::iter::repeat_n(true, resumed as usize))
        {
            recorder.handshake(true, resumed, 1_000_000, agreed);
        }
        recorder
    }

    /// An HTTP/2 thread whose window opened at 0 with `open` streams in
    /// flight, and whose server limited the streams to `limit`.
    fn h2_recorder(open: u32, limit: Option<u32>, goaways: u64) -> Recorder {
        let mut recorder = Recorder::new(false, (false, false, true), 1);
        let streams = recorder.streams.as_mut().unwrap();
        for on_connection in 1..=open {
            streams.opened(0, on_connection);
        }
        if let Some(limit) = limit {
            streams.server_limit(limit);
        }
        recorder.begin_window(0);
        let streams = recorder.streams.as_mut().unwrap();
        (0..goaways).for_each(|_| streams.goaway());
        recorder
    }

    #[test]
    fn the_snapshot_adds_up_the_handshakes() {
        let slots = LiveSlots::new(2);
        assert!(slots.try_publish(0, &tls_recorder(3, 5), (4, 0)));
        assert!(slots.try_publish(1, &tls_recorder(1, 7), (4, 0)));
        let live = slots.snapshot();
        let tls = live.tls.expect("a TLS run");
        assert_eq!((tls.full, tls.resumed, tls.total()), (4, 12, 16));
        assert_eq!(tls.resumed_share(), Some(0.75));
        assert!(live.http2.is_none(), "HTTP/1.1 over TLS");
        assert_eq!(LiveHandshakes::default().resumed_share(), None);
    }

    #[test]
    fn the_snapshot_adds_up_the_streams_in_flight_so_far() {
        let slots = LiveSlots::new(3);
        // 4 and 6 streams in flight since the window opened, 100 ms ago.
        let now_ns = 100 * NS_PER_MS;
        assert!(slots.try_publish(0, &h2_recorder(4, Some(8), 1), (2, now_ns)));
        assert!(slots.try_publish(1, &h2_recorder(6, None, 0), (2, now_ns)));
        assert!(slots.try_publish(2, &h2_recorder(2, Some(3), 2), (2, now_ns)));
        let live = slots.snapshot();
        let http2 = live.http2.expect("an HTTP/2 run");
        assert!((http2.in_flight_mean - 12.0).abs() < 1e-9, "{http2:?}");
        assert_eq!(http2.goaways, 3);
        assert_eq!(http2.server_limit, Some(3), "the lowest");
        assert!(live.tls.is_none(), "h2c");
    }

    #[test]
    fn a_cleartext_http1_snapshot_has_no_handshakes_or_streams() {
        let slots = LiveSlots::new(1);
        assert!(slots.try_publish(0, &recorder_with(&[100], 200), (1, 0)));
        let live = slots.snapshot();
        assert_eq!((live.tls, live.http2), (None, None));
    }

    #[test]
    fn a_slot_being_read_is_skipped_not_waited_for() {
        let slots = LiveSlots::new(1);
        let reading = lock(&slots.slots[0]);
        assert!(!slots.try_publish(0, &recorder_with(&[100], 200), (1, 0)));
        drop(reading);
        assert!(slots.try_publish(0, &recorder_with(&[100], 200), (1, 0)));
    }
}
