//! The guardian: a forked process that SIGKILLs a target's process group
//! when corobench dies, however it dies (SIGKILL included).
//!
//! `PR_SET_PDEATHSIG` only reaches a target's first process; nginx workers,
//! php-fpm children and node cluster workers outlive their master. So before
//! each launch corobench forks a guardian holding the read end of a pipe whose
//! write end only corobench holds. The target's first process writes its pid
//! (= its process group id) into the pipe before it executes, so the guardian
//! knows the group before any grandchild can exist. When corobench dies, the
//! kernel closes the write end; the guardian's `read` returns 0 and it kills
//! every group it was told about. A clean stop first writes a 0 ("disarm"),
//! so the guardian exits without signalling a group that is already gone.
//!
//! After `fork` the guardian runs only async-signal-safe code: raw system
//! calls on stack buffers, no allocation, no locks, no panics.

use std::os::fd::{AsRawFd, FromRawFd as _, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use crate::error::TargetError;

/// The most process groups one guardian remembers.
const MAX_GROUPS: usize = 8;

/// A running guardian and corobench's (write) end of its pipe.
#[derive(Debug)]
pub struct Guardian {
    pid: libc::pid_t,
    write_end: Option<OwnedFd>,
}

impl Guardian {
    /// Forks a guardian that watches nothing yet; `cgroup_kill`, a
    /// cgroup's `cgroup.kill` open for writing, is written to as well when
    /// corobench dies (it reaches what left the process groups).
    ///
    /// # Errors
    /// The pipe or the fork failed.
    pub fn spawn(cgroup_kill: Option<RawFd>) -> Result<Self, TargetError> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(TargetError::last_os("pipe2 (guardian)"));
        }
        let [read_fd, write_fd] = fds;
        // SAFETY: the child runs only `guardian_main`, which is async-signal-safe.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: in the forked child; never returns.
            unsafe { guardian_main(read_fd, write_fd, cgroup_kill.unwrap_or(-1)) }
        }
        // SAFETY: the parent owns both descriptors; it keeps only the write end.
        unsafe { libc::close(read_fd) };
        // SAFETY: `write_fd` is open and owned by nothing else in this process.
        let write_end = unsafe { OwnedFd::from_raw_fd(write_fd) };
        if pid < 0 {
            return Err(TargetError::last_os("fork (guardian)"));
        }
        Ok(Self {
            pid,
            write_end: Some(write_end),
        })
    }

    /// The descriptor a target's first process writes its pid to (it is
    /// close-on-exec, so the target keeps no copy).
    #[must_use]
    pub fn report_fd(&self) -> RawFd {
        self.write_end.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// The guardian's pid.
    #[must_use]
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Tells the guardian to forget its groups, lets it exit and reaps it.
    pub fn disarm(&mut self) {
        let Some(write_end) = self.write_end.take() else {
            return;
        };
        let disarm = 0i32.to_ne_bytes();
        // SAFETY: writes 4 bytes from a live buffer to an open descriptor.
        unsafe { libc::write(write_end.as_raw_fd(), disarm.as_ptr().cast(), disarm.len()) };
        drop(write_end);
        reap_or_kill(self.pid);
    }
}

impl Drop for Guardian {
    fn drop(&mut self) {
        self.disarm();
    }
}

/// Reports `pid` as a group to guard; called in a target's child between
/// `fork` and `exec`, so async-signal-safe.
pub fn report_from_child(fd: RawFd, pid: libc::pid_t) -> std::io::Result<()> {
    let bytes = pid.to_ne_bytes();
    // SAFETY: writes 4 bytes from a live stack buffer.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    if written == 4 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Waits (briefly) for an exiting guardian; one that does not exit is killed.
fn reap_or_kill(pid: libc::pid_t) {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let mut status = 0;
        // SAFETY: `pid` is our unreaped child; `status` is a valid out pointer.
        let reaped = unsafe { libc::waitpid(pid, &raw mut status, libc::WNOHANG) };
        if reaped != 0 {
            return; // reaped, or not ours to reap (ECHILD)
        }
        if Instant::now() >= deadline {
            // A forked sibling may still hold a copy of the write end.
            // SAFETY: `pid` is our unreaped child, so the pid cannot be reused.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            // SAFETY: as above.
            unsafe { libc::waitpid(pid, &raw mut status, 0) };
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The guardian's whole life. Async-signal-safe only.
///
/// # Safety
/// Call only in a freshly forked child.
unsafe fn guardian_main(read_fd: RawFd, write_fd: RawFd, cgroup_kill: RawFd) -> ! {
    // SAFETY: raw system calls on valid stack memory, nothing else.
    unsafe {
        libc::close(write_fd);
        // Out of corobench's group: a Ctrl-C on the terminal is for corobench,
        // which stops its targets itself; the guardian must outlive it.
        libc::setpgid(0, 0);
        for signal in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGPIPE,
            libc::SIGTSTP,
            libc::SIGTTIN,
            libc::SIGTTOU,
        ] {
            libc::signal(signal, libc::SIG_IGN);
        }
        close_all_but(read_fd, cgroup_kill);
        let mut groups = [0 as libc::pid_t; MAX_GROUPS];
        let mut count = 0usize;
        let mut message = [0u8; 4];
        let mut filled = 0usize;
        loop {
            let n = libc::read(read_fd, message.as_mut_ptr().add(filled).cast(), 4 - filled);
            if n < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            }
            if n <= 0 {
                break;
            }
            filled += n as usize;
            if filled < 4 {
                continue;
            }
            filled = 0;
            let pgid = libc::pid_t::from_ne_bytes(message);
            if pgid > 0 && count < MAX_GROUPS {
                groups[count] = pgid;
                count += 1;
            } else if pgid == 0 {
                count = 0;
            }
        }
        if count > 0 && cgroup_kill >= 0 {
            libc::write(cgroup_kill, b"1".as_ptr().cast(), 1);
        }
        let mut i = 0;
        while i < count {
            libc::kill(-groups[i], libc::SIGKILL);
            i += 1;
        }
        libc::_exit(0)
    }
}

/// Closes every descriptor except `keep` and `also` (-1: none), so the
/// guardian holds no other guardian's write end (which would keep that
/// pipe open forever).
///
/// # Safety
/// Async-signal-safe; call only in the forked guardian.
unsafe fn close_all_but(keep: RawFd, also: RawFd) {
    let (low, high) = if also < 0 {
        (keep, keep)
    } else {
        (keep.min(also), keep.max(also))
    };
    // SAFETY: close_range only closes descriptors of this process.
    unsafe {
        let range = |first: RawFd, last: RawFd| {
            first > last
                || libc::syscall(libc::SYS_close_range, first as u32, last as u32, 0u32) == 0
        };
        let closed = range(0, low - 1)
            && range(low + 1, high - 1)
            && libc::syscall(libc::SYS_close_range, (high + 1) as u32, u32::MAX, 0u32) == 0;
        if closed {
            return;
        }
        // Kernels before 5.9 lack close_range: close one by one.
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) == 0 {
            limit.rlim_cur.min(65_536) as RawFd
        } else {
            1024
        };
        let mut fd = 0;
        while fd < max {
            if fd != low && fd != high {
                libc::close(fd);
            }
            fd += 1;
        }
    }
}
