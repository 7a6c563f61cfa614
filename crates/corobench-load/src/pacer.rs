//! The open-loop schedule of one generator thread: request k is due at
//! `start + (k + phase) / rate`, independent of how the server responds.
//!
//! A thread awake anyway (it woke for the request due first, or a response
//! woke it) sends everything that falls due within one tick ([`TICK_NS`]
//! unless `--tick` says otherwise) rather than sleeping again for a few
//! microseconds: one wake-up then
//! serves several sends, which is most of what an open loop costs beyond a
//! closed one. A request sent early counts its latency from its actual
//! send, so no latency is ever shorter than the server took; none leaves
//! late because of the tick. The price is that the server sees the sends of
//! one tick together: at 100,000 req/s a thread sends about five at once.

use crate::clock::{NS_PER_S, NS_PER_US};

/// The most a request leaves before its intended time, by default:
/// requests due within one tick of a send leave with it.
pub(crate) const TICK_NS: u64 = 50 * NS_PER_US;

#[derive(Debug)]
pub(crate) struct Pacer {
    start_ns: u64,
    interval_ns: f64,
    /// Fraction of an interval this thread's schedule is shifted by, so that
    /// several threads interleave their sends instead of sending together.
    phase: f64,
    /// Index of the next request to send.
    next: u64,
    /// How far ahead of its intended time a request may leave.
    tick_ns: u64,
}

impl Pacer {
    /// `thread_rate_per_s` is this thread's share of the total rate.
    pub(crate) fn new(start_ns: u64, thread_rate_per_s: f64, phase: f64, tick_ns: u64) -> Self {
        let interval_ns = NS_PER_S as f64 / thread_rate_per_s;
        Self {
            start_ns,
            interval_ns,
            phase,
            next: 0,
            tick_ns,
        }
    }

    /// Intended send time of request `k`.
    #[inline]
    pub(crate) fn intended_ns(&self, k: u64) -> u64 {
        // The float-to-integer cast saturates, and so does the sum: a slow
        // rate's far-off requests are due "never", not at a wrapped time.
        self.start_ns
            .saturating_add(((k as f64 + self.phase) * self.interval_ns) as u64)
    }

    /// When the next unsent request is due.
    #[inline]
    pub(crate) fn next_due_ns(&self) -> u64 {
        self.intended_ns(self.next)
    }

    /// Takes the next request if it is due within a tick of `now_ns`;
    /// returns the moment its latency counts from: its intended time, or
    /// `now_ns` when it leaves ahead of it.
    #[inline]
    pub(crate) fn take_due(&mut self, now_ns: u64) -> Option<u64> {
        let due = self.next_due_ns();
        if due <= now_ns.saturating_add(self.tick_ns) {
            self.next += 1;
            Some(due.min(now_ns))
        } else {
            None
        }
    }

    /// Requests whose intended time is ≤ `now_ns`, sent or not.
    pub(crate) fn scheduled_by(&self, now_ns: u64) -> u64 {
        if now_ns < self.start_ns {
            return 0;
        }
        let elapsed = (now_ns - self.start_ns) as f64 / self.interval_ns - self.phase;
        if elapsed < 0.0 {
            0
        } else {
            (elapsed.floor() as u64).saturating_add(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_fall_due_at_the_rate() {
        let start = 1_000_000;
        let mut pacer = Pacer::new(start, 1000.0, 0.0, TICK_NS);
        assert_eq!(pacer.take_due(start - TICK_NS - 1), None);
        assert_eq!(pacer.take_due(start), Some(start));
        assert_eq!(pacer.take_due(start), None);
        // 10 ms later ten more are due: the schedule never waits for responses.
        let mut taken = 0;
        while pacer.take_due(start + 10_000_000).is_some() {
            taken += 1;
        }
        assert_eq!(taken, 10);
        assert_eq!(pacer.scheduled_by(start + 10_000_000), 11);
    }

    #[test]
    fn the_requests_due_within_a_tick_leave_together_and_none_late() {
        // 1000 req/s: one request every 1 ms, much longer than the tick.
        let mut pacer = Pacer::new(1_000_000, 1000.0, 0.0, TICK_NS);
        // A request taken early counts from when it left, not from its
        // later intended time: its latency is never shorter than the answer.
        let early = 1_000_000 - TICK_NS;
        assert_eq!(pacer.take_due(early - 1), None);
        assert_eq!(pacer.take_due(early), Some(early));
        assert_eq!(pacer.take_due(1_000_000), None, "the next is 1 ms later");
        // Late, it counts from when it was due: the wait is the server's.
        assert_eq!(pacer.take_due(2_000_300), Some(2_000_000));
        // 100,000 req/s: one every 10 µs, so a wake-up at the first sends
        // the five that follow within the tick too, each counted from the
        // moment they all left.
        let mut fast = Pacer::new(1_000_000, 100_000.0, 0.0, TICK_NS);
        let mut taken = Vec::new();
        while let Some(from) = fast.take_due(1_000_000) {
            taken.push(from);
        }
        assert_eq!(taken, vec![1_000_000; 6]);
        assert_eq!(fast.next_due_ns(), 1_060_000);
    }

    #[test]
    fn a_tick_of_zero_sends_each_request_at_its_own_time() {
        let mut exact = Pacer::new(1_000_000, 100_000.0, 0.0, 0);
        assert_eq!(exact.take_due(1_000_000), Some(1_000_000));
        assert_eq!(exact.take_due(1_009_999), None);
        assert_eq!(exact.take_due(1_010_000), Some(1_010_000));
        // A 1 ms tick at 10,000 req/s: eleven requests leave at once.
        let mut coarse = Pacer::new(0, 10_000.0, 0.0, 1_000_000);
        let mut taken = 0;
        while coarse.take_due(0).is_some() {
            taken += 1;
        }
        assert_eq!(taken, 11);
    }

    #[test]
    fn phase_shifts_the_schedule() {
        let pacer = Pacer::new(0, 100.0, 0.5, TICK_NS);
        assert_eq!(pacer.intended_ns(0), 5_000_000);
        assert_eq!(pacer.scheduled_by(4_999_999), 0);
        assert_eq!(pacer.scheduled_by(5_000_000), 1);
    }

    #[test]
    fn the_slowest_rate_saturates_instead_of_wrapping() {
        let slowest = crate::limits::MIN_RATE_PER_S / f64::from(crate::limits::MAX_THREADS);
        let pacer = Pacer::new(u64::MAX - 10, slowest, 0.999, TICK_NS);
        assert_eq!(pacer.intended_ns(0), u64::MAX);
        assert_eq!(pacer.intended_ns(u64::MAX), u64::MAX);
        assert_eq!(pacer.scheduled_by(u64::MAX), 0);
    }
}
