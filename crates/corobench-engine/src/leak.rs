//! The leak check: after the load stops and the target idles, its tasks,
//! processes and threads should be back near where they were before the
//! load, and its memory should not have kept climbing to the end of the
//! window. One check for every place a trial runs: the footprints come
//! from the trial's [`crate::trial::Server`], read in this process or
//! asked of `corobench serve` on the server host.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use corobench_model::{PoolCounters, PoolWindow, ResourceSample, TaskCounts, TrialFlag};

/// How long a target may take, beyond the scenario's idle time, to come
/// back to its baseline before it is flagged: pools retire idle workers on
/// a timer (ants after 1 s), which is not a leak.
pub const GRACE: Duration = Duration::from_secs(3);

/// How often the footprint is read while it settles.
const SETTLE_POLL: Duration = Duration::from_millis(250);

/// What a target holds at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// `/stats` tasks (goroutines, coroutines, requests in flight), if the target reports them.
    pub tasks: Option<u64>,
    pub processes: u32,
    pub threads: u32,
    pub rss_bytes: u64,
    /// The database pool's counters from `/stats`, if the target reports them.
    pub pool: Option<PoolCounters>,
}

const MIB: u64 = 1024 * 1024;

/// Flags for whatever did not come back to the baseline.
#[must_use]
pub fn check(before: &Footprint, after: &Footprint, window: &[ResourceSample]) -> Vec<TrialFlag> {
    let mut flags = Vec::new();
    let mut flag = |what: String| flags.push(TrialFlag::Leak { what });
    if let (Some(b), Some(a)) = (before.tasks, after.tasks) {
        // Runtimes keep a few helpers around; a real leak grows with the load.
        if a > b + (b / 4).max(16) {
            flag(format!("tasks: {b} before the load, {a} after it"));
        }
    }
    if after.processes > before.processes {
        flag(format!(
            "processes: {} before the load, {} after it",
            before.processes, after.processes
        ));
    }
    // Thread pools grow under load and may keep idle threads: only a large
    // excess counts.
    if after.threads > 2 * before.threads + 8 {
        flag(format!(
            "threads: {} before the load, {} after it",
            before.threads, after.threads
        ));
    }
    if let Some(growth) = rss_still_climbing(window) {
        flag(format!(
            "RSS still climbing: +{} MiB over the last third of the window",
            growth / MIB
        ));
    }
    flags
}

/// The footprint once it is back near `before`, or the last one `read`
/// gave when `grace` ran out or `stop` was set; `None` when no reading
/// succeeded. Memory that climbed during the window is judged from the
/// window's samples, which no later reading changes, so it is not waited
/// for.
pub fn settle(
    before: &Footprint,
    grace: Duration,
    stop: &AtomicBool,
    mut read: impl FnMut() -> Option<Footprint>,
) -> Option<Footprint> {
    let deadline = Instant::now() + grace;
    let mut last = None;
    loop {
        if let Some(after) = read() {
            if check(before, &after, &[]).is_empty() {
                return Some(after);
            }
            last = Some(after);
        }
        if Instant::now() >= deadline || stop.load(Ordering::Relaxed) {
            return last;
        }
        std::thread::sleep(SETTLE_POLL.min(deadline.saturating_duration_since(Instant::now())));
    }
}

/// Why a footprint could not be read: the reason as the server's side
/// gave it (on another host, `corobench serve` sends it as text).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unreadable(pub String);

/// The leak check of one trial: the baseline before the middle step, the
/// footprint once it settled after it. A footprint that cannot be read
/// (a server on another host that does not answer) skips the check and
/// says why, rather than flag or clear anything.
#[derive(Debug)]
pub struct LeakCheck {
    host: String,
    before: Result<Footprint, Unreadable>,
}

impl LeakCheck {
    /// The baseline of the server on `host`, read once it is healthy and
    /// before any load.
    #[must_use]
    pub fn before(host: &str, reading: Result<Footprint, Unreadable>) -> Self {
        Self {
            host: host.to_owned(),
            before: reading,
        }
    }

    /// After the load: the footprint once it is back near the baseline,
    /// read at once and then every 250 ms, or the last one `read` gave
    /// when `idle` and the grace ran out (or `stop` was set). A target
    /// back at its baseline at once costs the trial no waiting.
    pub fn settle(
        self,
        idle: Duration,
        stop: &AtomicBool,
        read: impl FnMut() -> Result<Footprint, Unreadable>,
    ) -> Settled {
        let mut read = read;
        let after = match &self.before {
            Ok(before) => settle(before, idle.saturating_add(GRACE), stop, || read().ok())
                .ok_or_else(|| Unreadable("no footprint was read after the load".to_owned())),
            Err(_) => Err(Unreadable("no baseline".to_owned())),
        };
        Settled {
            host: self.host,
            before: self.before,
            after,
        }
    }
}

/// The footprints of a trial around its load.
#[derive(Debug)]
pub struct Settled {
    host: String,
    before: Result<Footprint, Unreadable>,
    after: Result<Footprint, Unreadable>,
}

impl Settled {
    /// The database pool's counters before the load and once settled after
    /// it, when the target reported its pool both times.
    #[must_use]
    pub fn pool(&self) -> Option<PoolWindow> {
        let before = self.before.as_ref().ok()?.pool?;
        let after = self.after.as_ref().ok()?.pool?;
        Some(PoolWindow { before, after })
    }

    /// The tasks around the load (`peak` taken halfway through it), the
    /// leak flags with the samples of the `window`, and why the check
    /// could not run, if it could not.
    #[must_use]
    pub fn verdict(
        &self,
        peak: Option<u64>,
        window: &[ResourceSample],
    ) -> (TaskCounts, Vec<TrialFlag>, Option<String>) {
        let tasks = TaskCounts {
            before: self.before.as_ref().ok().and_then(|f| f.tasks),
            peak,
            after: self.after.as_ref().ok().and_then(|f| f.tasks),
        };
        match (&self.before, &self.after) {
            (Ok(before), Ok(after)) => (tasks, check(before, after, window), None),
            (Err(why), _) | (_, Err(why)) => {
                let why = format!(
                    "leak check skipped: the footprint of the target on {} could not be read \
                     ({why})",
                    self.host
                );
                (tasks, Vec::new(), Some(why))
            }
        }
    }
}

/// The RSS growth from the middle to the last third of the window, when it
/// is both large (16 MiB) and relative (10%): memory that keeps growing
/// under a steady load.
fn rss_still_climbing(window: &[ResourceSample]) -> Option<u64> {
    if window.len() < 6 {
        return None;
    }
    let third = window.len() / 3;
    let mean =
        |part: &[ResourceSample]| part.iter().map(|s| s.rss_bytes).sum::<u64>() / part.len() as u64;
    let middle = mean(&window[third..2 * third]);
    let last = mean(&window[2 * third..]);
    let growth = last.saturating_sub(middle);
    (growth > 16 * MIB && last * 10 > middle * 11).then_some(growth)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn footprint(tasks: u64, processes: u32, threads: u32) -> Footprint {
        Footprint {
            tasks: Some(tasks),
            processes,
            threads,
            rss_bytes: 50 * MIB,
            pool: None,
        }
    }

    fn rss_series(mib: &[u64]) -> Vec<ResourceSample> {
        mib.iter()
            .map(|&m| ResourceSample {
                rss_bytes: m * MIB,
                ..ResourceSample::default()
            })
            .collect()
    }

    #[test]
    fn back_to_baseline_is_clean() {
        let before = footprint(10, 2, 5);
        let after = footprint(14, 2, 9);
        assert!(check(&before, &after, &rss_series(&[50, 60, 61, 60, 61, 60])).is_empty());
    }

    #[test]
    fn each_kind_of_leak_is_named() {
        let before = footprint(10, 2, 5);
        let after = footprint(900, 3, 40);
        let flags = check(&before, &after, &rss_series(&[50, 60, 80, 100, 140, 180]));
        let text: Vec<String> = flags.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 4, "{text:?}");
        assert!(text[0].contains("tasks: 10 before the load, 900 after it"));
        assert!(text[1].contains("processes"));
        assert!(text[2].contains("threads"));
        assert!(
            text[3].contains("RSS still climbing: +70 MiB"),
            "{}",
            text[3]
        );
    }

    #[test]
    fn settling_stops_at_the_first_footprint_back_near_the_baseline() {
        let before = footprint(10, 1, 4);
        let mut readings = vec![Some(footprint(900, 1, 4)), None, Some(footprint(11, 1, 4))];
        readings.reverse();
        let running = AtomicBool::new(false);
        let settled = settle(&before, Duration::from_secs(60), &running, || {
            readings.pop().flatten()
        });
        assert_eq!(settled, Some(footprint(11, 1, 4)));
        assert!(readings.is_empty());
        let still_leaking = settle(&before, Duration::ZERO, &running, || {
            Some(footprint(900, 1, 4))
        });
        assert_eq!(still_leaking, Some(footprint(900, 1, 4)));
        assert_eq!(settle(&before, Duration::ZERO, &running, || None), None);
    }

    #[test]
    fn ctrl_c_ends_the_wait_for_a_footprint_that_never_settles() {
        let before = footprint(10, 1, 4);
        let stopped = AtomicBool::new(true);
        let mut reads = 0;
        // An hour of grace, but the run is stopping: one reading, no wait.
        let last = settle(&before, Duration::from_secs(3600), &stopped, || {
            reads += 1;
            Some(footprint(900, 1, 4))
        });
        assert_eq!((last, reads), (Some(footprint(900, 1, 4)), 1));
    }

    #[test]
    fn unknown_tasks_are_not_a_leak() {
        let before = Footprint {
            tasks: None,
            ..footprint(0, 1, 1)
        };
        let after = Footprint {
            tasks: Some(1000),
            ..footprint(0, 1, 1)
        };
        assert!(check(&before, &after, &[]).is_empty());
    }
}
