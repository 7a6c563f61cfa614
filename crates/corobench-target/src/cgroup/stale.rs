//! The cgroups of corobench processes that are gone: killed outright, they
//! could not stop what ran in them nor remove them. The next corobench
//! kills what is left in them and removes them.

use std::path::Path;
use std::time::{Duration, Instant};

use super::{PREFIX, hierarchy, live};
use crate::procfs;

/// How long the processes of a stale cgroup may take to die.
const KILL_GRACE: Duration = Duration::from_secs(5);

/// Kills what runs in the cgroups of corobench processes that no longer
/// exist, and removes those cgroups. A folder whose process runs (the same
/// process: its start time is in the name) is left alone.
pub fn remove_stale() {
    let (Ok(mountinfo), Ok(own)) = (
        std::fs::read_to_string("/proc/self/mountinfo"),
        std::fs::read_to_string("/proc/self/cgroup"),
    ) else {
        return;
    };
    for hierarchy in hierarchy::candidates(&mountinfo, &own) {
        let Ok(entries) = std::fs::read_dir(&hierarchy.own_dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some((pid, start)) = name.to_str().and_then(owner_of) else {
                continue;
            };
            if !still_runs(pid, start) {
                remove(&entry.path());
            }
        }
    }
}

/// The owner's pid and start time in `corobench-PID-START`.
pub(super) fn owner_of(name: &str) -> Option<(u32, u64)> {
    let (pid, start) = name.strip_prefix(PREFIX)?.split_once('-')?;
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// Whether process `pid` runs and is the one that started at `start`.
fn still_runs(pid: u32, start: u64) -> bool {
    if pid == std::process::id() {
        return true;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|text| procfs::parse_stat(&text).ok())
        .is_some_and(|stat| stat.starttime_ticks == start)
}

/// Kills the members of every cgroup in `base`, then removes them and it.
fn remove(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        if !dir.is_dir() {
            continue;
        }
        let deadline = Instant::now() + KILL_GRACE;
        loop {
            let members = live(&dir);
            if members.is_empty() || Instant::now() >= deadline {
                break;
            }
            if std::fs::write(dir.join("cgroup.kill"), "1").is_err() {
                for pid in members {
                    // SAFETY: the pid is listed in a cgroup corobench made.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = std::fs::remove_dir(&dir);
    }
    let _ = std::fs::remove_dir(base);
}

#[cfg(test)]
mod tests {
    use super::owner_of;

    #[test]
    fn a_folder_names_its_owner_and_start() {
        assert_eq!(owner_of("corobench-4242-98765"), Some((4242, 98765)));
        assert_eq!(owner_of("corobench-run-4242"), None);
        assert_eq!(owner_of("corobench-4242"), None);
        assert_eq!(owner_of("other-1-2"), None);
    }
}
