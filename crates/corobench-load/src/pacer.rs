//! The open-loop schedule of one generator thread: request k is due at
//! `start + (k + phase) / rate`, independent of how the server responds.

use crate::clock::NS_PER_S;

#[derive(Debug)]
pub(crate) struct Pacer {
    start_ns: u64,
    interval_ns: f64,
    /// Fraction of an interval this thread's schedule is shifted by, so that
    /// several threads interleave their sends instead of sending together.
    phase: f64,
    /// Index of the next request to send.
    next: u64,
}

impl Pacer {
    /// `thread_rate_per_s` is this thread's share of the total rate.
    pub(crate) fn new(start_ns: u64, thread_rate_per_s: f64, phase: f64) -> Self {
        Self {
            start_ns,
            interval_ns: NS_PER_S as f64 / thread_rate_per_s,
            phase,
            next: 0,
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

    /// Takes the next request if it is due by `now_ns`; returns its intended time.
    #[inline]
    pub(crate) fn take_due(&mut self, now_ns: u64) -> Option<u64> {
        let due = self.next_due_ns();
        if due <= now_ns {
            self.next += 1;
            Some(due)
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
        let mut pacer = Pacer::new(1_000, 1000.0, 0.0);
        assert_eq!(pacer.take_due(999), None);
        assert_eq!(pacer.take_due(1_000), Some(1_000));
        assert_eq!(pacer.take_due(1_000), None);
        // 10 ms later ten more are due: the schedule never waits for responses.
        let mut taken = 0;
        while pacer.take_due(1_000 + 10_000_000).is_some() {
            taken += 1;
        }
        assert_eq!(taken, 10);
        assert_eq!(pacer.scheduled_by(1_000 + 10_000_000), 11);
    }

    #[test]
    fn phase_shifts_the_schedule() {
        let pacer = Pacer::new(0, 100.0, 0.5);
        assert_eq!(pacer.intended_ns(0), 5_000_000);
        assert_eq!(pacer.scheduled_by(4_999_999), 0);
        assert_eq!(pacer.scheduled_by(5_000_000), 1);
    }

    #[test]
    fn the_slowest_rate_saturates_instead_of_wrapping() {
        let slowest = crate::limits::MIN_RATE_PER_S / f64::from(crate::limits::MAX_THREADS);
        let pacer = Pacer::new(u64::MAX - 10, slowest, 0.999);
        assert_eq!(pacer.intended_ns(0), u64::MAX);
        assert_eq!(pacer.intended_ns(u64::MAX), u64::MAX);
        assert_eq!(pacer.scheduled_by(u64::MAX), 0);
    }
}
