//! Why perf could not watch a process, and what to do about it: one rule
//! for the kernel counters and the profiler, decided from plain facts (who
//! corobench runs as, `kernel.perf_event_paranoid`, what happened) so that
//! every case is tested without a kernel that refuses.
//!
//! The setting is blamed only where it is the cause: the kernel refused
//! (EACCES or EPERM), corobench is not root (the setting does not apply to
//! root), and the level is above what a user without privileges needs. A
//! perf that hangs is reported as hung, never as a permission problem.

use std::time::Duration;

/// What happened when perf was asked to watch a process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PerfHappened {
    /// The kernel refused: `perf_event_open` failed with EACCES or EPERM.
    Denied,
    /// `command` had not finished `timeout` after it was asked to.
    Hung { command: String, timeout: Duration },
    /// It failed for another reason, which the caller reports itself.
    Failed,
}

/// The facts the advice depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerfAccess {
    /// corobench's effective user id.
    pub euid: u32,
    /// `kernel.perf_event_paranoid`, `None` where it cannot be read.
    pub paranoid: Option<i32>,
    /// The highest level at which a user without privileges may do what
    /// was asked (1: events in the kernel of the user's own processes).
    pub allowed_up_to: i32,
}

impl PerfAccess {
    /// The facts of this process: its effective user id (from
    /// `/proc/self/status`) and the kernel's setting.
    #[must_use]
    pub fn here(allowed_up_to: i32) -> Self {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let euid = status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(u32::MAX);
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|s| s.trim().parse().ok());
        Self {
            euid,
            paranoid,
            allowed_up_to,
        }
    }

    /// What to say after `happened`: a clause to follow the caller's own
    /// "what", or `None` when there is nothing to add.
    #[must_use]
    pub fn advice(&self, happened: &PerfHappened) -> Option<String> {
        match happened {
            PerfHappened::Failed => None,
            PerfHappened::Hung { command, timeout } => Some(format!(
                "`{command}` had not finished {} s after it was asked to stop, and was \
                 killed: perf hung (the kernel did not refuse it); run the command by hand \
                 to see where it hangs",
                timeout.as_secs_f64()
            )),
            PerfHappened::Denied => Some(self.denied()),
        }
    }

    fn denied(&self) -> String {
        let allowed = self.allowed_up_to;
        if self.euid == 0 {
            return "corobench runs as root, to whom kernel.perf_event_paranoid does not \
                    apply, so something else refused: a container without CAP_PERFMON or \
                    CAP_SYS_ADMIN, a seccomp profile or kernel lockdown; allow \
                    perf_event_open there"
                .to_owned();
        }
        match self.paranoid {
            Some(level) if level > allowed => format!(
                "kernel.perf_event_paranoid is {level}, above the {allowed} a user without \
                 privileges needs: run corobench as root, grant it CAP_PERFMON, or lower \
                 the setting (sysctl kernel.perf_event_paranoid={allowed})"
            ),
            Some(level) => format!(
                "kernel.perf_event_paranoid is {level}, which allows this, so it is not the \
                 cause: the process may belong to another user (run corobench as that user, \
                 or as root), or a seccomp profile or security module refuses perf_event_open"
            ),
            None => "kernel.perf_event_paranoid cannot be read: run corobench as root or \
                     grant it CAP_PERFMON"
                .to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(euid: u32, paranoid: Option<i32>) -> PerfAccess {
        PerfAccess {
            euid,
            paranoid,
            allowed_up_to: 1,
        }
    }

    fn denied(euid: u32, paranoid: Option<i32>) -> String {
        access(euid, paranoid)
            .advice(&PerfHappened::Denied)
            .unwrap()
    }

    #[test]
    fn root_is_never_told_to_run_as_root_nor_that_the_setting_is_the_cause() {
        for level in [None, Some(-1), Some(1), Some(2), Some(4)] {
            let advice = denied(0, level);
            assert!(!advice.contains("run corobench as root"), "{advice}");
            assert!(!advice.contains("sysctl"), "{advice}");
            assert!(advice.contains("does not apply"), "{advice}");
        }
    }

    #[test]
    fn the_setting_is_blamed_only_when_it_is_above_what_is_needed() {
        let blamed = denied(1000, Some(2));
        assert!(
            blamed.starts_with("kernel.perf_event_paranoid is 2, above the 1")
                && blamed.contains("sysctl kernel.perf_event_paranoid=1"),
            "{blamed}"
        );
        let innocent = denied(1000, Some(1));
        assert!(innocent.contains("it is not the cause"), "{innocent}");
        assert!(!innocent.contains("sysctl"), "{innocent}");
        assert!(denied(1000, None).contains("cannot be read"));
    }

    #[test]
    fn a_hung_perf_is_hung_with_its_command_and_timeout_whoever_runs_it() {
        let hung = PerfHappened::Hung {
            command: "perf record -p 7".to_owned(),
            timeout: Duration::from_secs(30),
        };
        for (euid, level) in [(0, Some(4)), (1000, Some(4)), (1000, Some(-1))] {
            let advice = access(euid, level).advice(&hung).unwrap();
            assert!(
                advice.starts_with("`perf record -p 7` had not finished 30 s after"),
                "{advice}"
            );
            assert!(advice.contains("perf hung"), "{advice}");
            assert!(!advice.contains("paranoid"), "{advice}");
            assert!(!advice.contains("root"), "{advice}");
        }
    }

    #[test]
    fn other_failures_get_no_advice() {
        assert_eq!(access(1000, Some(4)).advice(&PerfHappened::Failed), None);
    }
}
