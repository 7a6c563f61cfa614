//! Monotonic nanoseconds since the run began: cheap (vDSO), comparable across threads.

use std::time::Instant;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    base: Instant,
}

impl Clock {
    pub(crate) fn new(base: Instant) -> Self {
        Self { base }
    }

    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

pub(crate) const NS_PER_US: u64 = 1_000;
pub(crate) const NS_PER_MS: u64 = 1_000_000;
pub(crate) const NS_PER_S: u64 = 1_000_000_000;

/// Nanoseconds in a duration, saturating.
pub(crate) fn ns(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}
