//! A program started as the leader of its own process group and in a cgroup
//! of its own ([`crate::cgroup`]), guarded so that no process it starts
//! outlives corobench, and stopped whole: the group, and every process of
//! its cgroup, which also holds those that left the group (setsid, a
//! daemon's double fork).
//!
//! The leader is never reaped before the last signal to its group: while it is
//! an unreaped child (alive or zombie) its pid, which is the group id, cannot
//! be reused, so `kill(-pgid)` can only reach our own processes.

use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::{ChildStdout, Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use crate::cgroup::{Cgroup, CgroupError};
use crate::cpuset::CpuSet;
use crate::error::TargetError;
use crate::guardian::{self, Guardian};
use crate::procfs;

/// How often group membership is polled while waiting for it to empty.
const POLL_INTERVAL: Duration = Duration::from_millis(10);
/// How long SIGKILLed processes may take to disappear.
const KILL_GRACE: Duration = Duration::from_secs(10);

/// How a stop went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StopReport {
    /// The first process's exit status (`None` if something else reaped it).
    pub status: Option<ExitStatus>,
    /// The group outlived the stop timeout and was SIGKILLed.
    pub needed_sigkill: bool,
    /// The first process had exited before the stop began (it crashed).
    pub exited_before_stop: bool,
    /// From the first signal to the last process gone.
    pub elapsed: Duration,
    /// Pids still alive even after SIGKILL (stuck in the kernel); normally empty.
    pub survivors: Vec<i32>,
}

impl StopReport {
    /// The report, or an error naming the processes that even SIGKILL left
    /// alive (stuck in the kernel); `what` names the group ("target x").
    pub(crate) fn require_all_gone(self, what: &str) -> Result<Self, TargetError> {
        if self.survivors.is_empty() {
            return Ok(self);
        }
        Err(TargetError::Command {
            command: format!("stop {what}"),
            message: format!(
                "left processes {:?} alive even after SIGKILL",
                self.survivors
            ),
        })
    }
}

/// Added to the errno of a cgroup join that failed in a new process, so
/// that the spawn's error tells it from the program's own failure to start
/// (exec's errno values are far below it).
const JOIN_FAILED: i32 = 0x4000;

/// What a new process does between fork and exec, its descriptors set
/// before each attempt: report its pid to `report_fd` (its guardian), join
/// the cgroup whose `cgroup.procs` is `join_fd` (-1: none), arm the
/// parent-death signal, and take its CPUs.
#[derive(Debug)]
struct ChildSetup {
    report_fd: AtomicI32,
    join_fd: AtomicI32,
}

impl Default for ChildSetup {
    fn default() -> Self {
        Self {
            report_fd: AtomicI32::new(-1),
            join_fd: AtomicI32::new(-1),
        }
    }
}

impl ChildSetup {
    /// Gives `command` the one closure that runs this setup.
    fn install(self: &Arc<Self>, command: &mut Command, cpus: Option<&CpuSet>) {
        let setup = Arc::clone(self);
        let affinity = cpus.map(CpuSet::to_libc);
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        command.process_group(0);
        // SAFETY: the closure runs between fork and exec and makes only
        // async-signal-safe system calls (and atomic loads) on values
        // prepared before the fork.
        unsafe {
            command.pre_exec(move || {
                let report_fd = setup.report_fd.load(Ordering::SeqCst);
                guardian::report_from_child(report_fd, libc::getpid())?;
                // `0` is the writing process itself: it joins the cgroup,
                // and everything it starts is born there.
                let join_fd = setup.join_fd.load(Ordering::SeqCst);
                if join_fd >= 0 && libc::write(join_fd, b"0".as_ptr().cast(), 1) != 1 {
                    let errno = std::io::Error::last_os_error().raw_os_error();
                    let errno = JOIN_FAILED + errno.unwrap_or(libc::EINVAL);
                    return Err(std::io::Error::from_raw_os_error(errno));
                }
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    // corobench died before the parent-death signal was armed.
                    libc::_exit(1);
                }
                if let Some(set) = affinity
                    && libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &raw const set) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// Why a spawn's new process could not join its cgroup; `None` when the
/// spawn failed otherwise.
fn join_failure(error: &TargetError) -> Option<std::io::Error> {
    let TargetError::Spawn { source, .. } = error else {
        return None;
    };
    let errno = source.raw_os_error()?.checked_sub(JOIN_FAILED)?;
    Some(std::io::Error::from_raw_os_error(errno))
}

/// A process group led by a child of ours.
#[derive(Debug)]
pub struct ProcessGroup {
    pid: libc::pid_t,
    guardian: Guardian,
    reaped: bool,
    /// The leader's stdout when the command piped it, until taken.
    stdout: Option<ChildStdout>,
    /// The cgroup every process the leader starts stays in; `None` where
    /// none can be made (see [`crate::cgroup::support`]).
    cgroup: Option<Cgroup>,
}

impl ProcessGroup {
    /// Spawns `command` in a new process group whose leader reports itself to
    /// a fresh guardian, dies with SIGKILL when the spawning thread ends
    /// (`PR_SET_PDEATHSIG`), and runs on `cpus` when given.
    ///
    /// The thread that calls this must outlive the group: Linux delivers the
    /// parent-death signal when the *thread* that forked the leader exits.
    ///
    /// # Errors
    /// The guardian or the program could not be started.
    pub fn spawn(
        command: &mut Command,
        cpus: Option<&CpuSet>,
        what: &str,
    ) -> Result<Self, TargetError> {
        // One closure per command, whatever the attempts: closures added
        // by pre_exec all run, and one of a failed attempt would write to
        // descriptors closed since (or reused by the next spawn's pipe).
        let setup = Arc::new(ChildSetup::default());
        setup.install(command, cpus);
        let Ok(cgroup) = Cgroup::create(what) else {
            return Self::spawn_in(command, &setup, what, None);
        };
        let dir = cgroup.dir().display().to_string();
        let error = match Self::spawn_in(command, &setup, what, Some(cgroup)) {
            Ok(group) => return Ok(group),
            Err(error) => error,
        };
        // Only a failed join is worth an attempt without the cgroup: a
        // program that cannot start fails the same either way.
        let Some(why) = join_failure(&error) else {
            return Err(error);
        };
        let without = Self::spawn_in(command, &setup, what, None)?;
        Cgroup::refuse_from_now(CgroupError::JoinRefused {
            dir,
            reason: why.to_string(),
        });
        Ok(without)
    }

    /// [`ProcessGroup::spawn`] in `cgroup`, or in none.
    fn spawn_in(
        command: &mut Command,
        setup: &ChildSetup,
        what: &str,
        cgroup: Option<Cgroup>,
    ) -> Result<Self, TargetError> {
        let guardian = Guardian::spawn(cgroup.as_ref().and_then(Cgroup::kill_fd))?;
        setup
            .report_fd
            .store(guardian.report_fd(), Ordering::SeqCst);
        let join_fd = cgroup.as_ref().map_or(-1, Cgroup::join_fd);
        setup.join_fd.store(join_fd, Ordering::SeqCst);
        let mut child = command.spawn().map_err(|source| TargetError::Spawn {
            what: what.to_string(),
            command: crate::command::display(&program_and_args(command)),
            source,
        })?;
        let pid = libc::pid_t::try_from(child.id()).expect("pids fit in pid_t");
        let stdout = child.stdout.take();
        // The `Child` is dropped without waiting: this type reaps the leader.
        drop(child);
        Ok(Self {
            pid,
            guardian,
            reaped: false,
            stdout,
            cgroup,
        })
    }

    /// The read end of the leader's stdout, if the command was given
    /// `Stdio::piped()` (once; later calls return `None`).
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// The leader's pid, which is also the group id.
    #[must_use]
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// The guardian's pid.
    #[must_use]
    pub fn guardian_pid(&self) -> libc::pid_t {
        self.guardian.pid()
    }

    /// The leader's exit status if it has exited; it stays unreaped.
    #[must_use]
    pub fn exit_status(&self) -> Option<ExitStatus> {
        if self.reaped {
            return None;
        }
        // SAFETY: a zeroed siginfo_t is a valid out parameter.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        // SAFETY: `info` is a valid out pointer; WNOWAIT leaves the child unreaped.
        let result =
            unsafe { libc::waitid(libc::P_PID, self.pid as libc::id_t, &raw mut info, flags) };
        // SAFETY: si_pid is set by waitid (0 when the child has not changed state).
        if result != 0 || unsafe { info.si_pid() } == 0 {
            return None;
        }
        Some(status_from_siginfo(&info))
    }

    /// Sends `signal` to the leader only.
    pub fn signal_leader(&self, signal: libc::c_int) {
        if self.leader_is_ours() {
            // SAFETY: the leader is an unreaped child of ours.
            unsafe { libc::kill(self.pid, signal) };
        }
    }

    /// Sends `signal` to every process of the group, and of its cgroup.
    pub fn signal_group(&self, signal: libc::c_int) {
        if self.leader_is_ours() {
            // SAFETY: the unreaped leader holds the group id, so the group is ours.
            unsafe { libc::kill(-self.pid, signal) };
        }
        if let Some(cgroup) = &self.cgroup {
            cgroup.signal(signal);
        }
    }

    /// Kills every process of the group and of its cgroup.
    fn kill_all(&self) {
        self.signal_group(libc::SIGKILL);
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill();
        }
    }

    /// The live processes the group started: its cgroup's members, or
    /// without one, the live members of the process group.
    #[must_use]
    pub fn members(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = procfs::live_members(self.pid)
            .iter()
            .map(|m| m.pid)
            .collect();
        if let Some(cgroup) = &self.cgroup {
            pids.extend(cgroup.members());
            pids.sort_unstable();
            pids.dedup();
        }
        pids
    }

    /// The live processes still running after the first one exited: a
    /// program that daemonized (its first process exits, its child serves
    /// on). Empty while the first process runs, or when nothing is left.
    #[must_use]
    pub fn left_behind(&self) -> Vec<i32> {
        if self.exit_status().is_none() {
            return Vec::new();
        }
        self.members()
    }

    /// The cgroup's folder, if the group has one.
    #[must_use]
    pub fn cgroup_dir(&self) -> Option<&std::path::Path> {
        self.cgroup.as_ref().map(Cgroup::dir)
    }

    /// True while the leader is a child of ours that nobody has reaped (alive
    /// or a zombie): only then can its pid, the group id, not have been
    /// reused. Something else calling `wait(-1)` would break that, so this
    /// asks the kernel rather than trusting our own bookkeeping.
    fn leader_is_ours(&self) -> bool {
        if self.reaped {
            return false;
        }
        // SAFETY: a zeroed siginfo_t is a valid out parameter.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        // SAFETY: `info` is a valid out pointer; WNOWAIT reaps nothing.
        unsafe { libc::waitid(libc::P_PID, self.pid as libc::id_t, &raw mut info, flags) == 0 }
    }

    /// Sends `first` (to the leader or the whole group), waits up to `timeout`
    /// for every process of the group to end, SIGKILLs what is left, and reaps.
    pub fn stop(&mut self, first: libc::c_int, whole_group: bool, timeout: Duration) -> StopReport {
        let started = Instant::now();
        let exited_before_stop = self.exit_status().is_some();
        let started_here = self.members();
        if whole_group {
            self.signal_group(first);
        } else {
            self.signal_leader(first);
        }
        let mut needed_sigkill = false;
        let mut survivors = Vec::new();
        if !self.wait_until_empty(timeout) {
            needed_sigkill = true;
            if !self.kill_until_empty() {
                survivors = self.members();
            }
        }
        let status = self.reap();
        reap_those_of_ours(&started_here);
        StopReport {
            status,
            needed_sigkill,
            exited_before_stop,
            elapsed: started.elapsed(),
            survivors,
        }
    }

    /// SIGKILLs the whole group and its cgroup and reaps it, unless a stop
    /// already did.
    pub fn kill(&mut self) {
        if !self.reaped {
            let started_here = self.members();
            self.kill_until_empty();
            self.reap();
            reap_those_of_ours(&started_here);
        }
    }

    /// Kills everything, again while anything is left (a process that
    /// forked before its kill), up to the grace time; true once all died.
    fn kill_until_empty(&self) -> bool {
        let deadline = Instant::now() + KILL_GRACE;
        loop {
            self.kill_all();
            if self.members().is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// True once no live process of the group (or its cgroup) remains.
    fn wait_until_empty(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.members().is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Reaps the leader, then every zombie of the group that is our child
    /// (grandchildren reparented to us when we are a subreaper), and lets the
    /// guardian go.
    fn reap(&mut self) -> Option<ExitStatus> {
        let status = if self.reaped {
            None
        } else {
            self.reap_leader()
        };
        self.reaped = true;
        loop {
            let mut raw = 0;
            // SAFETY: waits only for our own children of this group.
            if unsafe { libc::waitpid(-self.pid, &raw mut raw, libc::WNOHANG) } <= 0 {
                break;
            }
        }
        self.guardian.disarm();
        status
    }

    /// Waits for the leader, which is dead or dying: a multi-threaded leader
    /// shows as a zombie before its last thread is gone, and only then can
    /// it be reaped.
    fn reap_leader(&self) -> Option<ExitStatus> {
        let deadline = Instant::now() + KILL_GRACE;
        loop {
            let mut raw = 0;
            // SAFETY: the leader is our child; `raw` is a valid out pointer.
            match unsafe { libc::waitpid(self.pid, &raw mut raw, libc::WNOHANG) } {
                0 if Instant::now() < deadline => std::thread::sleep(POLL_INTERVAL),
                pid if pid == self.pid => return Some(ExitStatus::from_raw(raw)),
                _ => return None, // reaped by someone else, or stuck past the grace
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Reaps those of `pids` that ended as zombie children of ours: processes
/// of a cgroup that were reparented to corobench (a subreaper) when their
/// parent died, in whatever group they had moved to.
fn reap_those_of_ours(pids: &[i32]) {
    let me = i32::try_from(std::process::id()).unwrap_or(-1);
    for &pid in pids {
        let Some(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|text| procfs::parse_stat(&text).ok())
        else {
            continue;
        };
        if stat.ppid == me && !stat.is_live() {
            // SAFETY: `pid` is a zombie child of ours; WNOHANG never blocks.
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
        }
    }
}

fn program_and_args(command: &Command) -> Vec<String> {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|s| s.to_string_lossy().into_owned())
        .collect()
}

/// A wait status rebuilt from `waitid`'s siginfo.
fn status_from_siginfo(info: &libc::siginfo_t) -> ExitStatus {
    // SAFETY: si_status is valid for the SIGCHLD siginfo waitid returned.
    let value = unsafe { info.si_status() };
    let raw = match info.si_code {
        libc::CLD_EXITED => (value & 0xff) << 8,
        libc::CLD_DUMPED => value | 0x80,
        _ => value,
    };
    ExitStatus::from_raw(raw)
}

/// Makes this process the reaper of its orphaned descendants
/// (`PR_SET_CHILD_SUBREAPER`): a target's grandchildren whose parent dies are
/// reparented to corobench instead of init, so stops can reap them.
///
/// # Errors
/// The `prctl` failed.
pub fn install_child_reaper() -> Result<(), TargetError> {
    // SAFETY: PR_SET_CHILD_SUBREAPER only changes a flag of this process.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) } != 0 {
        return Err(TargetError::last_os("prctl(PR_SET_CHILD_SUBREAPER)"));
    }
    Ok(())
}
