//! Which processes belong to a process group, read from `/proc`.

use std::time::{Duration, Instant};

/// One process of a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupMember {
    pub pid: i32,
    pub ppid: i32,
    /// The state letter of `/proc/PID/stat`: `R`, `S`, `D`, `Z` (zombie), ...
    pub state: char,
}

impl GroupMember {
    /// Still running: neither a zombie nor dead.
    #[must_use]
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Every process (zombies included) whose process group is `pgid`.
#[must_use]
pub fn group_members(pgid: i32) -> Vec<GroupMember> {
    processes()
        .filter(|(_, group)| *group == pgid)
        .map(|(member, _)| member)
        .collect()
}

/// Every process (zombies included) whose parent is `ppid`.
#[must_use]
pub fn children_of(ppid: i32) -> Vec<GroupMember> {
    processes()
        .map(|(member, _)| member)
        .filter(|member| member.ppid == ppid)
        .collect()
}

/// Waits up to `timeout` for `pids` to end, reaping those that end as
/// zombie children of ours (orphans reparented to us as a subreaper);
/// returns the ones still running.
pub(crate) fn await_gone(mut pids: Vec<i32>, timeout: Duration) -> Vec<i32> {
    let deadline = Instant::now() + timeout;
    let me = i32::try_from(std::process::id()).unwrap_or(-1);
    loop {
        pids.retain(|&pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let Some((member, _)) = parse_stat(&stat) else {
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

/// Every process with its process group, as `/proc` lists them now.
fn processes() -> impl Iterator<Item = (GroupMember, i32)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            parse_stat(&stat)
        })
}

/// The live members of group `pgid`.
#[must_use]
pub fn live_members(pgid: i32) -> Vec<GroupMember> {
    group_members(pgid)
        .into_iter()
        .filter(GroupMember::is_live)
        .collect()
}

/// `pid (comm) S ppid pgrp ...`; `comm` may hold spaces and parentheses, so
/// the fields are counted from the last `)`.
fn parse_stat(stat: &str) -> Option<(GroupMember, i32)> {
    let (head, tail) = stat.rsplit_once(')')?;
    let pid = head.split_once('(')?.0.trim().parse().ok()?;
    let mut fields = tail.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((GroupMember { pid, ppid, state }, pgrp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_lines_with_awkward_names() {
        let line = "4242 (a) b (c)) S 17 4240 4240 0 -1 4194560 0 0";
        let (member, pgrp) = parse_stat(line).unwrap();
        assert_eq!(
            member,
            GroupMember {
                pid: 4242,
                ppid: 17,
                state: 'S'
            }
        );
        assert_eq!(pgrp, 4240);
        assert!(member.is_live());
        let (zombie, _) = parse_stat("7 (sh) Z 1 7 7 0").unwrap();
        assert!(!zombie.is_live());
        assert_eq!(parse_stat("garbage"), None);
    }

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
