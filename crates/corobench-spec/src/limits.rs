//! The bounds every spec value must stay within (docs/spec.md lists them),
//! and the limits of the process that will run the plan.
//!
//! The bounds keep every product and sum the runner and the estimate compute
//! far from overflow, and refuse at planning time what could never run.

use std::time::Duration;

/// The longest `duration`, `warmup`, `idle` or `timeout`: a day.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);
/// The most trials a scenario may have (defined with the run record).
pub use corobench_model::MAX_TRIALS;
/// The most generator threads.
pub const MAX_GENERATOR_THREADS: u32 = 1_024;
/// The most connections of one scenario: the generator reaches one server
/// port from one address, so each connection needs a local port of its own.
pub const MAX_CONNECTIONS: u32 = 65_535;
/// The lowest open-loop rate, requests per second.
pub const MIN_RATE: f64 = 0.001;
/// The highest open-loop rate, requests per second.
pub const MAX_RATE: f64 = 10_000_000.0;
/// The most scenarios one plan expands into.
pub const MAX_SCENARIOS: usize = 100_000;
/// The longest `body` written in the spec; longer bodies belong in `body_file`.
pub const MAX_BODY_TEXT: usize = 1 << 20;
/// The largest `body_file`.
pub const MAX_BODY_FILE: u64 = 256 << 20;
/// The most request bytes (paths, headers, text bodies, once per scenario;
/// body files once per workload) a plan may hold in memory.
pub const MAX_PLAN_BYTES: u64 = 1 << 30;
/// File descriptors the generator keeps besides its connections (as
/// corobench-load reserves them).
const SPARE_FDS: u64 = 64;

/// What the process that runs the plan can open. The resolver does no I/O:
/// the binary measures these with [`Limits::of_this_process`] and passes
/// them to [`crate::resolve_within`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most connections one scenario may open.
    pub max_connections: u32,
    /// What sets `max_connections` and how to raise it, for messages.
    pub max_connections_reason: String,
}

impl Default for Limits {
    /// Only the spec's own bounds: for planning away from the machine that runs.
    fn default() -> Self {
        Self {
            max_connections: MAX_CONNECTIONS,
            max_connections_reason: format!(
                "a scenario opens at most {MAX_CONNECTIONS} connections (one local port each)"
            ),
        }
    }
}

impl Limits {
    /// The limits of this process on Linux, read from `/proc`: the hard
    /// RLIMIT_NOFILE (the generator raises its soft limit to it),
    /// `fs.nr_open`, and the local port range. Whatever cannot be read is
    /// left at the spec's own bound.
    #[must_use]
    pub fn of_this_process() -> Self {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        Self::from_proc(
            read("/proc/self/limits").as_deref(),
            read("/proc/sys/fs/nr_open").as_deref(),
            read("/proc/sys/net/ipv4/ip_local_port_range").as_deref(),
        )
    }

    /// [`Limits::of_this_process`] from the text of those three files.
    #[must_use]
    pub fn from_proc(limits: Option<&str>, nr_open: Option<&str>, ports: Option<&str>) -> Self {
        let mut best = Self::default();
        let mut lower = |max: u64, reason: String| {
            let max = u32::try_from(max).unwrap_or(u32::MAX);
            if max < best.max_connections {
                best = Self {
                    max_connections: max,
                    max_connections_reason: reason,
                };
            }
        };
        if let Some(hard) = limits.and_then(hard_open_files) {
            let max = hard.saturating_sub(SPARE_FDS);
            lower(
                max,
                format!(
                    "this process may open {hard} files (the hard limit of `ulimit -n`), {SPARE_FDS} of them kept spare; raise it in /etc/security/limits.conf or use fewer connections"
                ),
            );
        }
        if let Some(nr_open) = nr_open.and_then(|t| t.trim().parse::<u64>().ok()) {
            let max = nr_open.saturating_sub(SPARE_FDS);
            lower(
                max,
                format!(
                    "the kernel lets a process open {nr_open} files (sysctl fs.nr_open), {SPARE_FDS} of them kept spare; raise it or use fewer connections"
                ),
            );
        }
        if let Some(count) = ports.and_then(port_count) {
            lower(
                count,
                format!(
                    "the local port range (sysctl net.ipv4.ip_local_port_range) holds {count} ports, one per connection; widen it or use fewer connections"
                ),
            );
        }
        best
    }
}

/// The hard "Max open files" of a `/proc/<pid>/limits` text; `None` when
/// unlimited or absent.
fn hard_open_files(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let mut columns = line["Max open files".len()..].split_whitespace();
    let _soft = columns.next()?;
    columns.next()?.parse().ok()
}

/// How many ports `ip_local_port_range` ("32768\t60999") holds.
fn port_count(range: &str) -> Option<u64> {
    let mut bounds = range.split_whitespace().map(|p| p.parse::<u64>().ok());
    let (low, high) = (bounds.next()??, bounds.next()??);
    high.checked_sub(low).map(|span| span + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: &str = "Limit                     Soft Limit           Hard Limit           Units     \n\
        Max processes             unlimited            unlimited            processes \n\
        Max open files            1024                 20000                files     \n";

    #[test]
    fn the_lowest_limit_wins_and_says_why() {
        let limits = Limits::from_proc(Some(LIMITS), Some("1048576\n"), Some("32768\t60999\n"));
        assert_eq!(limits.max_connections, 20_000 - 64);
        assert!(limits.max_connections_reason.contains("ulimit -n"));
        let ports = Limits::from_proc(None, Some("1048576\n"), Some("50000\t50099\n"));
        assert_eq!(ports.max_connections, 100);
        assert!(ports.max_connections_reason.contains("ip_local_port_range"));
    }

    #[test]
    fn unreadable_or_odd_files_leave_the_spec_bound() {
        let odd = Limits::from_proc(
            Some("Max open files unlimited unlimited files"),
            Some("x"),
            Some("9 1"),
        );
        assert_eq!(odd, Limits::default());
        assert_eq!(
            Limits::from_proc(Some("Max open files 10 10 files"), None, None).max_connections,
            0
        );
    }
}
