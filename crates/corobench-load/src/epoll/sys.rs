//! A minimal safe wrapper over Linux epoll. Not mio: `epoll_pwait2` takes a
//! nanosecond timeout, which an open-loop schedule needs (a millisecond
//! timeout would add up to 1 ms of fake latency to every paced request).

use std::io;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};

pub(crate) const READABLE: u32 = libc::EPOLLIN as u32;
pub(crate) const WRITABLE: u32 = libc::EPOLLOUT as u32;
pub(crate) const PEER_CLOSED: u32 = (libc::EPOLLRDHUP | libc::EPOLLHUP) as u32;
pub(crate) const ERROR: u32 = libc::EPOLLERR as u32;
const EDGE: u32 = libc::EPOLLET as u32;

#[derive(Debug)]
pub(crate) struct Epoll {
    fd: OwnedFd,
    /// Whether the kernel has epoll_pwait2 (5.11+); otherwise millisecond waits.
    precise: bool,
}

pub(crate) type Event = libc::epoll_event;

pub(crate) fn empty_events(capacity: usize) -> Vec<Event> {
    vec![libc::epoll_event { events: 0, u64: 0 }; capacity]
}

impl Epoll {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: epoll_create1 returns a new descriptor or -1.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a freshly created descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Self { fd, precise: true })
    }

    /// Registers `fd` edge-triggered for `interest` (plus peer-close and errors).
    pub(crate) fn add(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, interest)
    }

    pub(crate) fn modify(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, token, interest)
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: interest | EDGE | libc::EPOLLRDHUP as u32,
            u64: token,
        };
        // SAFETY: the event struct lives for the call; fd validity is the kernel's to check.
        let rc = unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &raw mut event) };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Waits up to `timeout_ns` for events; returns how many were written.
    pub(crate) fn wait(&mut self, events: &mut [Event], timeout_ns: u64) -> io::Result<usize> {
        let max = libc::c_int::try_from(events.len()).unwrap_or(libc::c_int::MAX);
        let rc = if self.precise {
            let ts = libc::timespec {
                tv_sec: libc::time_t::try_from(timeout_ns / 1_000_000_000)
                    .unwrap_or(libc::time_t::MAX),
                tv_nsec: libc::c_long::try_from(timeout_ns % 1_000_000_000).unwrap_or(0),
            };
            // SAFETY: events points to `max` writable entries; ts outlives the call;
            // a null sigmask means "keep the current one".
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait2,
                    self.fd.as_raw_fd(),
                    events.as_mut_ptr(),
                    max,
                    &raw const ts,
                    std::ptr::null::<libc::sigset_t>(),
                    0usize,
                )
            };
            if rc < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                self.precise = false;
                return self.wait(events, timeout_ns);
            }
            rc
        } else {
            let timeout_ms =
                libc::c_int::try_from(timeout_ns.div_ceil(1_000_000)).unwrap_or(libc::c_int::MAX);
            // SAFETY: as above.
            libc::c_long::from(unsafe {
                libc::epoll_wait(self.fd.as_raw_fd(), events.as_mut_ptr(), max, timeout_ms)
            })
        };
        match rc {
            n if n >= 0 => Ok(usize::try_from(n).unwrap_or(0)),
            _ => {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::Interrupted {
                    Ok(0)
                } else {
                    Err(error)
                }
            }
        }
    }
}
