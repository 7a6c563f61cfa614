//! A cgroup of its own for every process group corobench starts.
//!
//! A process group does not hold a program: a server that calls `setsid`,
//! daemonizes or double-forks leaves it, and a stop sent to the group misses
//! what left. A cgroup holds every descendant, whatever session or group it
//! moves to, and its members are listed by the kernel. So each started
//! group's first process joins a fresh cgroup before it executes
//! (`CGROUP/corobench-PID-START/N-NAME`, beside corobench in its own
//! cgroup), and stopping it stops the cgroup: `cgroup.kill` on cgroup v2,
//! SIGKILL to each listed member on a v1 `pids` or `freezer` hierarchy.
//! The sampler, the kernel counters and the leak check read the same
//! members ([`holding`]).
//!
//! Where no cgroup can be made (no writable hierarchy: a user without a
//! delegated subtree), [`support`] says why and every group falls back to
//! its process group, as before. A corobench killed outright cannot remove
//! its cgroups: the next one does ([`remove_stale`]), as it removes the
//! scratch folders.

mod hierarchy;
mod stale;

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

pub use stale::remove_stale;

use crate::procfs;
use hierarchy::{Hierarchy, Version};

/// The prefix of the folder each corobench process makes its cgroups in.
const PREFIX: &str = "corobench-";

/// This process's folder of cgroups, made on first use, or why none can be.
#[derive(Debug)]
struct Base {
    dir: PathBuf,
    version: Version,
}

/// Why started programs get no cgroup of their own here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CgroupError {
    /// A file of `/proc` that says which cgroups exist could not be read.
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: &'static str, reason: String },
    #[error("no cgroup file system (v2, or v1 pids or freezer) is mounted")]
    NotMounted,
    /// No hierarchy has a folder this process may write; each refusal said.
    #[error(
        "{} (as a user without root, run corobench in a delegated cgroup, e.g. under \
         `systemd-run --user --scope -p Delegate=yes`)",
        .refusals.join("; ")
    )]
    NoneWritable { refusals: Vec<String> },
    /// The folder of one cgroup, or its `cgroup.procs`, could not be made
    /// or opened.
    #[error("cannot {action} {}: {reason}", .path.display())]
    Folder {
        action: &'static str,
        path: PathBuf,
        reason: String,
    },
    /// A process could not join a cgroup made for it: none is made since.
    #[error("a process could not join {dir}: {reason}")]
    JoinRefused { dir: String, reason: String },
}

static BASE: OnceLock<Result<Base, CgroupError>> = OnceLock::new();
/// Set when moving a process into a cgroup failed: from then on, groups
/// are tracked by their process group alone.
static REFUSED: OnceLock<CgroupError> = OnceLock::new();

/// Whether started programs get a cgroup of their own: `Ok` with where
/// (`cgroup v2 at /sys/fs/cgroup/...`), or why not.
///
/// # Errors
/// The reason no cgroup can be made here.
pub fn support() -> Result<String, CgroupError> {
    if let Some(why) = REFUSED.get() {
        return Err(why.clone());
    }
    base().map(|base| format!("{} at {}", base.version, base.dir.display()))
}

fn base() -> Result<&'static Base, CgroupError> {
    BASE.get_or_init(make_base).as_ref().map_err(Clone::clone)
}

/// `corobench-PID-START` in the first hierarchy whose own cgroup this
/// process may write.
fn make_base() -> Result<Base, CgroupError> {
    let read = |path| {
        std::fs::read_to_string(path).map_err(|e| CgroupError::Unreadable {
            path,
            reason: e.to_string(),
        })
    };
    let mountinfo = read("/proc/self/mountinfo")?;
    let own = read("/proc/self/cgroup")?;
    let candidates = hierarchy::candidates(&mountinfo, &own);
    if candidates.is_empty() {
        return Err(CgroupError::NotMounted);
    }
    let mut refusals = Vec::new();
    for Hierarchy { own_dir, version } in candidates {
        if !hierarchy::writable(&own_dir) {
            refusals.push(format!("{} is not writable", own_dir.display()));
            continue;
        }
        let dir = own_dir.join(own_folder_name());
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(Base { dir, version }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Ok(Base { dir, version });
            }
            Err(e) => refusals.push(format!("cannot create {}: {e}", dir.display())),
        }
    }
    Err(CgroupError::NoneWritable { refusals })
}

/// `corobench-PID-START`: the start time tells this process from a later
/// one that reuses its pid.
fn own_folder_name() -> String {
    let pid = std::process::id();
    let start = own_start_ticks().unwrap_or(0);
    format!("{PREFIX}{pid}-{start}")
}

fn own_start_ticks() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    procfs::parse_stat(&text).ok().map(|s| s.starttime_ticks)
}

/// A cgroup made for one started process group. Dropping it removes its
/// folder once its members are gone (a stop or a kill saw to that).
#[derive(Debug)]
pub(crate) struct Cgroup {
    dir: PathBuf,
    /// `cgroup.procs`, open for writing: the first process writes `0` to
    /// it between fork and exec to join.
    procs: OwnedFd,
    /// `cgroup.kill` (cgroup v2, Linux 5.14), open for writing.
    kill: Option<OwnedFd>,
}

impl Cgroup {
    /// A fresh, empty cgroup for the group `what` ("target x"), or why none.
    pub(crate) fn create(what: &str) -> Result<Self, CgroupError> {
        if let Some(why) = REFUSED.get() {
            return Err(why.clone());
        }
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = base()?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name: String = what
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let dir = base.dir.join(format!("{n}-{name}"));
        // The base folder goes with the last cgroup of a stop (see Drop):
        // the next group makes it again.
        std::fs::create_dir_all(&base.dir)
            .and_then(|()| std::fs::create_dir(&dir))
            .map_err(|e| CgroupError::Folder {
                action: "create",
                path: dir.clone(),
                reason: e.to_string(),
            })?;
        let open = |file: &str| {
            std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join(file))
                .map(OwnedFd::from)
        };
        let procs = match open("cgroup.procs") {
            Ok(fd) => fd,
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                return Err(CgroupError::Folder {
                    action: "open",
                    path: dir.join("cgroup.procs"),
                    reason: e.to_string(),
                });
            }
        };
        let kill = match base.version {
            Version::V2 => open("cgroup.kill").ok(),
            Version::V1(_) => None,
        };
        Ok(Self { dir, procs, kill })
    }

    /// Gives up on cgroups for the rest of this process: a process could
    /// not join one (`why`), so none would hold anything.
    pub(crate) fn refuse_from_now(why: CgroupError) {
        let _ = REFUSED.set(why);
    }

    /// The descriptor the first process writes `0` to, to join.
    pub(crate) fn join_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// The descriptor of `cgroup.kill`, when the kernel has one.
    pub(crate) fn kill_fd(&self) -> Option<RawFd> {
        self.kill.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// The cgroup's folder.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The live processes in the cgroup now.
    pub(crate) fn members(&self) -> Vec<i32> {
        live(&self.dir)
    }

    /// Sends `signal` to every process in the cgroup now.
    pub(crate) fn signal(&self, signal: libc::c_int) {
        for pid in self.members() {
            // SAFETY: the pid was listed in our cgroup a moment ago; only a
            // process that exited and whose pid was reused at once, outside
            // it, could be reached instead.
            unsafe { libc::kill(pid, signal) };
        }
    }

    /// Kills every process in the cgroup: `cgroup.kill` where the kernel
    /// has it (which also catches those forking meanwhile), else SIGKILL to
    /// each member, to be repeated until none is left.
    pub(crate) fn kill(&self) {
        if let Some(kill) = &self.kill {
            // SAFETY: writes one byte from a static buffer to an open file.
            let written = unsafe { libc::write(kill.as_raw_fd(), b"1".as_ptr().cast(), 1) };
            if written == 1 {
                return;
            }
        }
        self.signal(libc::SIGKILL);
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Fails while members remain (stuck in the kernel): the next
        // corobench removes it then.
        let _ = std::fs::remove_dir(&self.dir);
        if let Some(base) = self.dir.parent() {
            // Fails while other cgroups of this process remain: fine.
            let _ = std::fs::remove_dir(base);
        }
    }
}

/// The live pids listed in the `cgroup.procs` of `dir`.
fn live(dir: &Path) -> Vec<i32> {
    let Ok(text) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| line.trim().parse().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| procfs::parse_stat(&stat).ok())
                .is_some_and(|stat| stat.is_live())
        })
        .collect()
}

/// The cgroup corobench made that holds process `pid` (a started group's
/// first process), if any: what the sampler and the counters read for its
/// members.
#[must_use]
pub fn holding(pid: i32) -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let theirs = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    hierarchy::candidates(&mountinfo, &theirs)
        .into_iter()
        .map(|h| h.own_dir)
        .find(|dir| is_ours(dir))
}

/// The live members of a cgroup [`holding`] returned.
#[must_use]
pub fn members(dir: &Path) -> Vec<i32> {
    live(dir)
}

/// Whether `dir` is a started group's cgroup: `.../corobench-PID-START/N-NAME`.
fn is_ours(dir: &Path) -> bool {
    dir.parent()
        .and_then(Path::file_name)
        .and_then(|name| name.to_str())
        .is_some_and(|name| stale::owner_of(name).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_cgroups_under_a_corobench_folder_are_ours() {
        assert!(is_ours(Path::new(
            "/sys/fs/cgroup/corobench-123-456/0-target_x"
        )));
        assert!(!is_ours(Path::new(
            "/sys/fs/cgroup/user.slice/session-1.scope"
        )));
        assert!(!is_ours(Path::new("/sys/fs/cgroup/corobench-123-456")));
    }
}
