//! Which corobench process measures a run, and whether it still runs. A
//! pid alone is not enough: the kernel reuses pids, so the process's start
//! time (clock ticks after boot) is recorded with it and compared.

use corobench_model::RunProcess;
use corobench_target::procfs::parse_stat;

/// This process, as a run records it.
#[must_use]
pub fn this_process() -> Option<RunProcess> {
    started(std::process::id()).map(|started| RunProcess {
        pid: std::process::id(),
        started,
    })
}

/// Whether `process` still runs (the same process, not a reused pid).
#[must_use]
pub fn is_alive(process: &RunProcess) -> bool {
    started(process.pid) == Some(process.started)
}

/// When process `pid` started, if it exists and has not exited.
fn started(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let stat = parse_stat(&text).ok()?;
    stat.is_live().then_some(stat.starttime_ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not() {
        let me = this_process().expect("/proc/self/stat is readable");
        assert!(is_alive(&me));
        let impostor = RunProcess {
            started: me.started + 1,
            ..me
        };
        assert!(!is_alive(&impostor), "same pid, another start time");
        let gone = RunProcess {
            pid: u32::MAX,
            started: 0,
        };
        assert!(!is_alive(&gone));
    }
}
