//! Finds the processes of a target by scanning `/proc`: every member of the
//! process group it was started in, and every descendant of a member.
//!
//! Most processes of a target (nginx master and workers, node cluster
//! workers) inherit its group. Some leave it: PHP-FPM's master calls
//! `setsid()`, and its workers follow it into the new session. They are still
//! the target's descendants, and they do the target's work, so they count.
//! A daemon that double-forks is no longer a descendant once its parent
//! exits; a target started in a cgroup of its own (`corobench_target::cgroup`)
//! is followed through its cgroup's members too, which hold it wherever it
//! went.

use std::collections::{HashMap, HashSet};

use corobench_target::procfs::ProcStat;

use crate::error::SamplerError;
use crate::reader::ProcReader;

/// Scans `/proc` for the members of one process group, remembering which
/// pids belong to other groups so later scans need not read their `stat`.
///
/// A pid is remembered as foreign only while it stays listed in `/proc`; once
/// it disappears it is forgotten, so a reused pid is read afresh. (Missing a
/// reuse would need the kernel to hand out `pid_max` pids within one sampling
/// interval.) A foreign process could only join the target by `setpgid` into
/// its group or by being reparented to one of its members, which targets do
/// not do: their processes are born into the tree.
#[derive(Debug)]
pub(crate) struct GroupScanner {
    pgid: i32,
    /// The cgroup the group's leader was started in, when corobench made one.
    cgroup: Option<std::path::PathBuf>,
    /// Its members at this scan.
    in_cgroup: HashSet<i32>,
    pids: Vec<i32>,
    /// Foreign pid → the scan in which it was last listed.
    foreign: HashMap<i32, u64>,
    /// This scan's processes not known to be foreign, and the target's among them.
    seen: Vec<ProcStat>,
    tree: HashSet<i32>,
    scans: u64,
}

impl GroupScanner {
    pub(crate) fn new(pgid: i32) -> Self {
        Self {
            pgid,
            cgroup: corobench_target::cgroup::holding(pgid),
            in_cgroup: HashSet::new(),
            pids: Vec::with_capacity(512),
            foreign: HashMap::new(),
            seen: Vec::with_capacity(512),
            tree: HashSet::new(),
            scans: 0,
        }
    }

    /// Replaces `members` with the `stat` of every process (zombies included)
    /// in this scanner's process group or descending from a member of it.
    pub(crate) fn scan(
        &mut self,
        reader: &mut ProcReader,
        members: &mut Vec<ProcStat>,
    ) -> Result<(), SamplerError> {
        self.scans += 1;
        members.clear();
        self.seen.clear();
        self.in_cgroup.clear();
        if let Some(dir) = &self.cgroup {
            self.in_cgroup
                .extend(corobench_target::cgroup::members(dir));
            // A cgroup member was listed as foreign before it joined the
            // tree (a daemon reparented away): look at it afresh.
            self.foreign.retain(|pid, _| !self.in_cgroup.contains(pid));
        }
        reader.list_pids(&mut self.pids)?;
        for &pid in &self.pids {
            if let Some(last_listed) = self.foreign.get_mut(&pid) {
                *last_listed = self.scans;
                continue;
            }
            if let Some(stat) = reader.stat(pid)? {
                self.seen.push(stat);
            }
        }
        self.close_tree();
        for stat in self.seen.drain(..) {
            if self.tree.contains(&stat.pid) {
                members.push(stat);
            } else {
                self.foreign.insert(stat.pid, self.scans);
            }
        }
        let current = self.scans;
        self.foreign
            .retain(|_, last_listed| *last_listed == current);
        Ok(())
    }

    /// The group's members (and its cgroup's), then their descendants,
    /// until no process is added.
    fn close_tree(&mut self) {
        self.tree.clear();
        self.tree.extend(
            self.seen
                .iter()
                .filter(|s| s.pgrp == self.pgid || self.in_cgroup.contains(&s.pid))
                .map(|s| s.pid),
        );
        loop {
            let before = self.tree.len();
            for stat in &self.seen {
                if self.tree.contains(&stat.ppid) {
                    self.tree.insert(stat.pid);
                }
            }
            if self.tree.len() == before {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::*;
    use crate::error::SamplerError;

    fn fake_process(root: &Path, pid: i32, pgrp: i32, state: char) {
        fake_child(root, pid, 1, pgrp, state);
    }

    fn fake_child(root: &Path, pid: i32, ppid: i32, pgrp: i32, state: char) {
        let dir = root.join(pid.to_string());
        fs::create_dir_all(&dir).unwrap();
        let stat = format!(
            "{pid} (worker {pid}) {state} {ppid} {pgrp} {pgrp} 0 -1 0 0 0 0 0 7 3 0 0 20 0 2 0 {pid}0 1000 25 0\n"
        );
        fs::write(dir.join("stat"), stat).unwrap();
    }

    #[test]
    fn descendants_that_left_the_group_still_count() {
        // 300 leads the group; 310 (a child) called setsid() and leads its own
        // session and group; 320 and 105 (pid reused below its parent's) are
        // its children; 401 is a stranger.
        let root = tempfile::tempdir().unwrap();
        fake_process(root.path(), 300, 300, 'S');
        fake_child(root.path(), 310, 300, 310, 'S');
        fake_child(root.path(), 320, 310, 310, 'S');
        fake_child(root.path(), 105, 320, 310, 'R');
        fake_process(root.path(), 401, 401, 'S');
        let pids = scan(root.path(), &mut GroupScanner::new(300)).unwrap();
        assert_eq!(pids, [105, 300, 310, 320]);
    }

    fn scan(root: &Path, scanner: &mut GroupScanner) -> Result<Vec<i32>, SamplerError> {
        let mut reader = ProcReader::new(root.to_str().unwrap());
        let mut members = Vec::new();
        scanner.scan(&mut reader, &mut members)?;
        let mut pids: Vec<i32> = members.iter().map(|m| m.pid).collect();
        pids.sort_unstable();
        Ok(pids)
    }

    #[test]
    fn finds_exactly_the_members_of_the_group() {
        let root = tempfile::tempdir().unwrap();
        fake_process(root.path(), 300, 300, 'S');
        fake_process(root.path(), 301, 300, 'R');
        fake_process(root.path(), 302, 300, 'Z');
        fake_process(root.path(), 400, 400, 'S');
        fake_process(root.path(), 401, 1, 'S');
        // Entries that are not processes are skipped.
        fs::create_dir(root.path().join("sys")).unwrap();
        fs::write(root.path().join("uptime"), "1.0 1.0\n").unwrap();
        let pids = scan(root.path(), &mut GroupScanner::new(300)).unwrap();
        assert_eq!(pids, [300, 301, 302]);
    }

    #[test]
    fn forgets_a_foreign_pid_once_it_is_gone() {
        let root = tempfile::tempdir().unwrap();
        fake_process(root.path(), 300, 300, 'S');
        fake_process(root.path(), 500, 1, 'S');
        let mut scanner = GroupScanner::new(300);
        assert_eq!(scan(root.path(), &mut scanner).unwrap(), [300]);
        assert!(scanner.foreign.contains_key(&500));
        // 500 exits; its pid comes back as a new member of the group.
        fs::remove_dir_all(root.path().join("500")).unwrap();
        assert_eq!(scan(root.path(), &mut scanner).unwrap(), [300]);
        assert!(!scanner.foreign.contains_key(&500));
        fake_process(root.path(), 500, 300, 'S');
        assert_eq!(scan(root.path(), &mut scanner).unwrap(), [300, 500]);
    }

    #[test]
    fn a_process_without_a_stat_file_is_gone_not_an_error() {
        let root = tempfile::tempdir().unwrap();
        fake_process(root.path(), 300, 300, 'S');
        fs::create_dir(root.path().join("301")).unwrap();
        assert_eq!(
            scan(root.path(), &mut GroupScanner::new(300)).unwrap(),
            [300]
        );
    }

    #[test]
    fn a_garbled_stat_file_is_an_error_naming_the_file() {
        let root = tempfile::tempdir().unwrap();
        fake_process(root.path(), 300, 300, 'S');
        fs::write(root.path().join("300/stat"), "300 (cut").unwrap();
        let error = scan(root.path(), &mut GroupScanner::new(300)).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("300/stat"), "{message}");
        assert!(message.contains("`)`"), "{message}");
    }

    #[test]
    fn a_missing_proc_root_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        let missing = root.path().join("proc");
        let error = scan(&missing, &mut GroupScanner::new(300)).unwrap_err();
        assert!(error.to_string().contains("is /proc mounted"), "{error}");
    }
}
