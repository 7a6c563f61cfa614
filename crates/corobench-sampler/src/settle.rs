//! Resident memory once it has settled: after a server is handed idle
//! connections it may still be growing (lazily touched stacks, a runtime
//! that grows its heap in steps), so RSS is read until it stops changing.
//! Settled means: over the last `window`, the readings spread by no more
//! than `threshold_bytes`. A server that never settles within `timeout`
//! gives its last reading, marked unsettled.

use std::time::{Duration, Instant};

use crate::error::SamplerError;
use crate::snapshot::snapshot;

/// How settling is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettleRule {
    /// Time between readings.
    pub interval: Duration,
    /// How long RSS must stay within `threshold_bytes`.
    pub window: Duration,
    pub threshold_bytes: u64,
    /// The longest wait.
    pub timeout: Duration,
}

impl Default for SettleRule {
    /// Readings every 100 ms; settled when 1 s of them lie within 64 KiB
    /// (16 pages); at most 15 s.
    fn default() -> Self {
        Self {
            interval: Duration::from_millis(100),
            window: Duration::from_secs(1),
            threshold_bytes: 64 * 1024,
            timeout: Duration::from_secs(15),
        }
    }
}

/// A process tree's RSS as it settled (or when the wait ran out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettledRss {
    pub rss_bytes: u64,
    pub settled: bool,
    pub waited: Duration,
}

/// Readings of one wait, judged as they come.
#[derive(Debug)]
pub(crate) struct Settling {
    rule: SettleRule,
    /// (time since the start, RSS) within the last window.
    recent: Vec<(Duration, u64)>,
}

impl Settling {
    pub(crate) fn new(rule: SettleRule) -> Self {
        Self {
            rule,
            recent: Vec::new(),
        }
    }

    /// Adds a reading taken `at` after the start; whether RSS has settled.
    pub(crate) fn add(&mut self, at: Duration, rss_bytes: u64) -> bool {
        self.recent.push((at, rss_bytes));
        let window = self.rule.window;
        // Keep one reading at or before the window's start, so a full
        // window is known to be covered.
        while self.recent.len() > 1 && at.saturating_sub(self.recent[1].0) >= window {
            self.recent.remove(0);
        }
        let covered = at.saturating_sub(self.recent[0].0) >= window;
        let (lo, hi) = self
            .recent
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), &(_, r)| (lo.min(r), hi.max(r)));
        covered && hi - lo <= self.rule.threshold_bytes
    }
}

/// Reads the RSS of process group `pgid` (and its descendants) until it
/// settles by `rule`.
///
/// # Errors
/// The group is gone or `/proc` cannot be read.
pub fn settled_rss(pgid: impl Into<i64>, rule: SettleRule) -> Result<SettledRss, SamplerError> {
    let pgid = pgid.into();
    let start = Instant::now();
    let mut settling = Settling::new(rule);
    loop {
        let rss_bytes = snapshot(pgid)?.rss_bytes;
        let waited = start.elapsed();
        let settled = settling.add(waited, rss_bytes);
        if settled || waited >= rule.timeout {
            return Ok(SettledRss {
                rss_bytes,
                settled,
                waited,
            });
        }
        std::thread::sleep(rule.interval);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(readings: &[u64]) -> Vec<bool> {
        let mut settling = Settling::new(SettleRule::default());
        readings
            .iter()
            .enumerate()
            .map(|(i, &r)| settling.add(Duration::from_millis(100 * i as u64), r))
            .collect()
    }

    #[test]
    fn rss_settles_after_a_full_window_within_the_threshold() {
        let mb = 1 << 20;
        // Growing until 0.4 s, then flat within 16 KiB.
        let mut readings = vec![10 * mb, 12 * mb, 14 * mb, 15 * mb, 16 * mb];
        readings.extend([16 * mb, 16 * mb + 16_384, 16 * mb].iter().cycle().take(12));
        let verdicts = judge(&readings);
        let first = verdicts.iter().position(|&v| v).unwrap();
        assert_eq!(first, 14, "settled at 1.4 s: 1 s after the growth stopped");
    }

    #[test]
    fn a_steady_climb_never_settles() {
        let readings: Vec<u64> = (0..40).map(|i| 1_000_000 + i * 100_000).collect();
        assert!(judge(&readings).iter().all(|&v| !v));
    }
}
