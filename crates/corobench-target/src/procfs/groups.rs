//! Which processes belong to a process group, read from `/proc`.

use std::time::{Duration, Instant};

use super::parse::{ProcStat, parse_pid, parse_stat};

/// Every process (zombies included) whose process group is `pgid`.
#[must_use]
pub fn group_members(pgid: i32) -> Vec<ProcStat> {
    processes().filter(|stat| stat.pgrp == pgid).collect()
}

/// Every process (zombies included) whose parent is `ppid`.
#[must_use]
pub fn children_of(ppid: i32) -> Vec<ProcStat> {
    processes().filter(|stat| stat.ppid == ppid).collect()
}

/// Waits up to `timeout` for `pids` to end, reaping those that end as
/// zombie children of ours (orphans reparented to us as a subreaper);
/// returns the ones still running.
pub(crate) fn await_gone(mut pids: Vec<i32>, timeout: Duration) -> Vec<i32> {
    let deadline = Instant::now() + timeout;
    let me = i32::try_from(std::process::id()).unwrap_or(-1);
    loop {
        pids.retain(|&pid| {
            let Some(member) = read_stat(pid) else {
                return false;
            };
            if member.is_live() {
                return true;
            }
            if member.ppid == me {
                // SAFETY: `pid` is a zombie child of ours; WNOHANG never blocks.
                unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
            }
            false
        });
        if pids.is_empty() || Instant::now() >= deadline {
            return pids;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Every process, as `/proc` lists them now.
fn processes() -> impl Iterator<Item = ProcStat> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| parse_pid(entry.file_name().to_str()?))
        .filter_map(read_stat)
}

/// `/proc/<pid>/stat`, or `None` when the process is gone (or its file is
/// not what the kernel documents, which only a foreign kernel would do).
fn read_stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text).ok()
}

/// The live members of group `pgid`.
#[must_use]
pub fn live_members(pgid: i32) -> Vec<ProcStat> {
    group_members(pgid)
        .into_iter()
        .filter(ProcStat::is_live)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_this_process_in_its_own_group() {
        // SAFETY: getpgrp has no preconditions.
        let pgid = unsafe { libc::getpgrp() };
        let pid = i32::try_from(std::process::id()).unwrap();
        assert!(group_members(pgid).iter().any(|m| m.pid == pid));
        let mut child = std::process::Command::new("sleep")
            .arg("1000")
            .spawn()
            .unwrap();
        let children = children_of(pid);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            children.iter().any(|m| m.pid == child.id() as i32),
            "{children:?}"
        );
    }
}
