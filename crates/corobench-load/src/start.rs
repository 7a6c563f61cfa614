//! When a run begins: now, or late enough that its measured window opens at
//! a wall-clock instant (`--start-at`), so that generators on several hosts
//! measure the same stretch of time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use corobench_model::WindowPlacement;

use crate::clock::{NS_PER_US, ns};
use crate::error::{LoadError, Setting};
use crate::limits::MAX_DURATION;

/// The longest nap while waiting, so that cancelling is noticed promptly
/// and a wall clock stepped by NTP is read again.
const WAIT_SLICE: Duration = Duration::from_millis(50);

/// The moment a run's clock counts from, on both clocks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Origin {
    /// The monotonic instant the generator threads count from.
    pub(crate) instant: Instant,
    /// The same moment by the wall clock.
    pub(crate) wall: SystemTime,
    /// When the measured window opens (at the earliest, in an open loop),
    /// in nanoseconds after `instant`.
    pub(crate) window_start_ns: u64,
    /// Open loop: the warm-up that follows the schedule's start.
    pub(crate) warmup_after_ready_ns: u64,
    /// The wall-clock instant the window was asked to open at, if any.
    pub(crate) start_at: Option<SystemTime>,
}

impl Origin {
    /// Starts now; the window opens after the warm-up.
    pub(crate) fn now(warmup: Duration) -> Self {
        let (instant, wall) = both_clocks();
        Self {
            instant,
            wall,
            window_start_ns: ns(warmup),
            warmup_after_ready_ns: ns(warmup),
            start_at: None,
        }
    }

    /// Waits until `start_at - warmup` (unless cancelled), then starts, so
    /// that the warm-up ends and the window opens at `start_at`. When that
    /// moment is already near or past, the warm-up is shortened, down to
    /// nothing: the window then opens at once, as close to `start_at` as it
    /// still can.
    pub(crate) fn at(start_at: SystemTime, warmup: Duration, cancel: &AtomicBool) -> Self {
        let begin = start_at.checked_sub(warmup).unwrap_or(UNIX_EPOCH);
        sleep_until(begin, cancel);
        let (instant, wall) = both_clocks();
        Self {
            instant,
            wall,
            window_start_ns: start_at.duration_since(wall).map_or(0, ns),
            // The window opens at `start_at`, or as soon as the schedule
            // begins if the generator is ready only after it.
            warmup_after_ready_ns: 0,
            start_at: Some(start_at),
        }
    }

    /// Where the window was, given when (after `instant`) it actually opened.
    pub(crate) fn placement(&self, opened_ns: u64) -> WindowPlacement {
        let opened = self.wall + Duration::from_nanos(opened_ns);
        let window_start_unix_us = unix_us(opened);
        let start_at_unix_us = self.start_at.map(unix_us);
        WindowPlacement {
            host: host_name(),
            window_start_unix_us: Some(window_start_unix_us),
            start_at_unix_us,
            start_offset_us: start_at_unix_us
                .map(|at| WindowPlacement::offset_us(window_start_unix_us, at)),
        }
    }
}

/// Refuses a start more than a day before or after now: such a time is a
/// typing mistake (a wrong year or time zone) rather than a plan.
///
/// # Errors
/// [`LoadError::Config`] about [`Setting::StartAt`].
pub fn check_start_at(start_at: SystemTime, now: SystemTime) -> Result<(), LoadError> {
    let distance = start_at
        .duration_since(now)
        .or_else(|_| now.duration_since(start_at))
        .unwrap_or_default();
    if distance > MAX_DURATION {
        let hours = distance.as_secs_f64() / 3600.0;
        return Err(LoadError::config(
            &[Setting::StartAt],
            format!(
                "the start is {hours:.0}h away from this host's clock; it must be within 24h \
                 (check the date and that the time is UTC, written with a Z)"
            ),
        ));
    }
    Ok(())
}

/// Both clocks read back to back, as one moment.
fn both_clocks() -> (Instant, SystemTime) {
    (Instant::now(), SystemTime::now())
}

/// Sleeps until the wall clock reaches `when`, or `cancel` is set.
fn sleep_until(when: SystemTime, cancel: &AtomicBool) {
    while !cancel.load(Ordering::Relaxed) {
        match when.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(WAIT_SLICE)),
            _ => return,
        }
    }
}

/// Nanoseconds since the Unix epoch (0 before it).
pub(crate) fn unix_ns(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, ns)
}

/// Microseconds since the Unix epoch (0 before it).
pub(crate) fn unix_us(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| ns(d) / NS_PER_US)
}

/// This machine's host name, as `uname -n` prints it.
fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_within_a_day_is_accepted_either_way() {
        let now = SystemTime::now();
        let hour = Duration::from_secs(3600);
        assert!(check_start_at(now + hour, now).is_ok());
        assert!(check_start_at(now - hour, now).is_ok());
        let message = check_start_at(now + 25 * hour, now)
            .unwrap_err()
            .to_string();
        assert!(message.contains("the start is 25h away"), "{message}");
        assert!(check_start_at(now - 48 * hour, now).is_err());
    }

    /// Issue "wrong successes", item 13: "now + 25 h", read a moment later,
    /// was reported as "24h away" (whole hours, rounded down).
    #[test]
    fn the_distance_is_rounded_to_the_nearest_hour() {
        let now = SystemTime::now();
        let almost = Duration::from_secs(25 * 3600) - Duration::from_millis(20);
        let message = check_start_at(now + almost, now).unwrap_err().to_string();
        assert!(message.contains("the start is 25h away"), "{message}");
    }

    #[test]
    fn a_past_start_opens_the_window_at_once() {
        let past = SystemTime::now() - Duration::from_secs(5);
        let origin = Origin::at(past, Duration::from_secs(1), &AtomicBool::new(false));
        assert_eq!(origin.window_start_ns, 0);
        let placement = origin.placement(0);
        assert!(placement.start_offset_us.unwrap() >= 5_000_000);
    }

    #[test]
    fn the_offset_is_the_window_start_minus_the_requested_start() {
        let origin = Origin {
            instant: Instant::now(),
            wall: UNIX_EPOCH + Duration::from_secs(100),
            window_start_ns: 0,
            warmup_after_ready_ns: 0,
            start_at: Some(UNIX_EPOCH + Duration::from_micros(100_000_250)),
        };
        let placement = origin.placement(1_000);
        assert_eq!(placement.window_start_unix_us, Some(100_000_001));
        assert_eq!(placement.start_offset_us, Some(-249));
    }

    #[test]
    fn a_cancelled_wait_ends_at_once() {
        let far = SystemTime::now() + Duration::from_secs(3600);
        let origin = Origin::at(far, Duration::ZERO, &AtomicBool::new(true));
        assert!(origin.window_start_ns > 0);
    }
}
