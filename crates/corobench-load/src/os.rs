//! The few OS calls the generator needs besides socket I/O: CPU time of a
//! thread, CPU pinning, timer slack, and the file-descriptor limit.

use std::io;
use std::time::Duration;

/// User and system CPU time consumed by the calling thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CpuTime {
    pub(crate) user: Duration,
    pub(crate) system: Duration,
}

impl CpuTime {
    pub(crate) fn of_this_thread() -> Self {
        // SAFETY: getrusage only writes into the zeroed struct we pass.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_THREAD, &raw mut usage);
            usage
        };
        Self {
            user: timeval(usage.ru_utime),
            system: timeval(usage.ru_stime),
        }
    }

    pub(crate) fn since(self, earlier: Self) -> Self {
        Self {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }
}

fn timeval(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u32::try_from(tv.tv_usec).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(u64::from(micros))
}

/// Peak resident memory of the whole process.
pub(crate) fn max_rss_bytes() -> u64 {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &raw mut usage);
        usage
    };
    u64::try_from(usage.ru_maxrss)
        .unwrap_or(0)
        .saturating_mul(1024)
}

/// Pins the calling thread to one CPU.
pub(crate) fn pin_this_thread(cpu: usize) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET checks nothing, so the index is
    // bounded first; sched_setaffinity(0, ..) targets the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Asks the kernel to wake this thread's timers on time (the default slack of
/// 50 µs would show up as fake latency in an open-loop schedule).
pub(crate) fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// Raises the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force.
pub(crate) fn raise_fd_limit() -> io::Result<u64> {
    // SAFETY: getrlimit/setrlimit read and write the struct we own.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) != 0 {
            return Err(io::Error::last_os_error());
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raw const raised) == 0 {
                return Ok(raised.rlim_max);
            }
        }
        Ok(limit.rlim_cur)
    }
}

/// The kernel's ceiling for any process's file-descriptor limit
/// (`/proc/sys/fs/nr_open`), when it can be read.
pub(crate) fn nr_open() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether an OS error means "no file descriptor left".
pub(crate) fn is_fd_exhaustion(error: &io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// Whether an OS error means "no local port left" for a new connection.
pub(crate) fn is_port_exhaustion(error: &io::Error) -> bool {
    error.raw_os_error() == Some(libc::EADDRNOTAVAIL)
}
