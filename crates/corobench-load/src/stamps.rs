//! Kernel receive timestamps (`SO_TIMESTAMPING`, software): the moment the
//! kernel took a response's bytes off the wire, instead of the moment the
//! generator's event loop got round to reading them. The epoll backend
//! reads with `recvmsg` when they are asked for, the io_uring backend with
//! a multishot `recvmsg` (Linux 6.0); the stamp is on the realtime clock
//! and is moved onto the run's monotonic clock.

use std::io;
use std::mem;
use std::os::fd::RawFd;

use socket2::Socket;

use crate::cmsg;

/// `SO_TIMESTAMPING` with a 64-bit `time_t` on x86_64 and aarch64 (MIPS and
/// SPARC number it differently); the control message that carries the
/// stamps has the same number.
const SO_TIMESTAMPING: libc::c_int = 37;

/// Room for one `SCM_TIMESTAMPING` control message (three timespecs).
pub(crate) const CONTROL_BYTES: usize = 128;

/// The io_uring backend receives stamped bytes with a multishot `recvmsg`,
/// which Linux has since 6.0: `(6, 0)`.
pub(crate) const URING_MIN_KERNEL: (u32, u32) = (6, 0);

/// The running kernel's `(major, minor)` version, from a release string
/// such as `6.18.44-fc`.
pub(crate) fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Whether this kernel's io_uring receives stamped bytes (multishot
/// `recvmsg`); the error names the running release.
pub(crate) fn uring_can_stamp() -> Result<(), String> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let release = release.trim();
    match kernel_version(release) {
        Some(version) if version >= URING_MIN_KERNEL => Ok(()),
        _ => Err(release.to_string()),
    }
}

/// Whether a stamped open loop may read its responses at its next send
/// rather than when they arrive (see `Driver::responses_can_wait`): one
/// request at a time per kept-alive HTTP/1.1 connection. HTTP/2 answers
/// frames the server waits for, a connection per request must send as soon
/// as it connects, and a pipelined send waits for the previous one's
/// completion.
pub(crate) fn reads_can_wait(schedule: &crate::Schedule, h2: bool) -> bool {
    schedule.rate_per_s().is_some() && schedule.keepalive && schedule.pipeline == 1 && !h2
}

/// Whether an open loop stamps its responses in the kernel without being
/// asked: where its reads can wait (see [`reads_can_wait`]), on io_uring,
/// which can sleep through completions (epoll cannot sleep through
/// readiness), and without kTLS, which reads control messages of its own.
/// Waiting halves the wake-ups an open loop pays per request.
pub(crate) fn open_loop_wants(config: &crate::LoadConfig, ktls: bool, h2: bool) -> bool {
    reads_can_wait(&config.schedule, h2)
        && config.backend == crate::Backend::IoUring
        && !ktls
        && uring_can_stamp().is_ok()
}

/// Asks the kernel to stamp what arrives on `socket` in software, and
/// with `send` what leaves it (the stamps then wait in its error queue).
pub(crate) fn enable(socket: &Socket, send: bool) -> io::Result<()> {
    use std::os::fd::AsRawFd as _;
    let mut flags: libc::c_uint =
        libc::SOF_TIMESTAMPING_RX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE;
    if send {
        flags |= libc::SOF_TIMESTAMPING_TX_SOFTWARE | libc::SOF_TIMESTAMPING_OPT_TSONLY;
    }
    // SAFETY: the option value is a c_uint that lives across the call, and
    // its length is passed with it.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_TIMESTAMPING,
            (&raw const flags).cast(),
            mem::size_of::<libc::c_uint>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Reads into `buf` like `recv`; also returns the kernel's receive stamp,
/// in nanoseconds since the Unix epoch, when there is one.
pub(crate) fn recv(
    fd: RawFd,
    buf: &mut [u8],
    control: &mut [u8; CONTROL_BYTES],
) -> io::Result<(usize, Option<u64>)> {
    let (n, msg) = cmsg::recv_with_control(fd, buf, control)?;
    Ok((n, stamp_of(&msg)))
}

/// Takes every send stamp waiting in `fd`'s error queue; returns the
/// latest, in nanoseconds since the Unix epoch.
pub(crate) fn send_stamps(fd: RawFd, control: &mut [u8; CONTROL_BYTES]) -> Option<u64> {
    let mut latest = None;
    loop {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 0,
        };
        // SAFETY: an all-zero msghdr is valid (no name, no buffers).
        let mut msg: libc::msghdr = unsafe { mem::zeroed() };
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = CONTROL_BYTES;
        // SAFETY: msg points at `iov` and `control`, alive and exclusively
        // borrowed for the call.
        let n = unsafe { libc::recvmsg(fd, &raw mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if n < 0 {
            return latest;
        }
        latest = latest.max(stamp_of(&msg));
    }
}

/// The software receive stamp among the control messages in `control`
/// (as a multishot `recvmsg` lays them out in its buffer).
pub(crate) fn stamp_in(control: &[u8]) -> Option<u64> {
    // SAFETY: an all-zero msghdr is valid (no name, no buffers).
    let mut msg: libc::msghdr = unsafe { mem::zeroed() };
    // Only read through: the CMSG macros take a mutable pointer.
    msg.msg_control = control.as_ptr().cast_mut().cast();
    msg.msg_controllen = control.len();
    stamp_of(&msg)
}

/// A `recvmsg` template for multishot receives that asks for room for
/// the stamps and no peer address.
pub(crate) fn multishot_template() -> Box<libc::msghdr> {
    // SAFETY: an all-zero msghdr is valid (no name, no buffers).
    let mut msg: Box<libc::msghdr> = Box::new(unsafe { mem::zeroed() });
    msg.msg_controllen = CONTROL_BYTES;
    msg
}

/// The software receive stamp among `msg`'s control messages.
fn stamp_of(msg: &libc::msghdr) -> Option<u64> {
    let data = cmsg::find(msg, libc::SOL_SOCKET, SO_TIMESTAMPING)?;
    // SAFETY: an SCM_TIMESTAMPING message carries three timespecs; the
    // data may be unaligned, hence read_unaligned.
    let stamps: [libc::timespec; 3] = unsafe { std::ptr::read_unaligned(data.cast()) };
    let software = stamps[0];
    let ns = u64::try_from(software.tv_sec)
        .ok()?
        .checked_mul(1_000_000_000)?;
    ns.checked_add(u64::try_from(software.tv_nsec).ok()?)
}

/// A realtime stamp on the run's clock, which began at `base_unix_ns` by
/// the wall clock; never later than `now_ns` (the realtime clock may have
/// been stepped) and never before the run began.
pub(crate) fn on_run_clock(stamp_unix_ns: u64, base_unix_ns: u64, now_ns: u64) -> u64 {
    stamp_unix_ns.saturating_sub(base_unix_ns).min(now_ns)
}

#[cfg(test)]
mod tests {

    #[test]
    fn only_one_request_at_a_time_over_http1_reads_at_the_next_send() {
        use crate::Schedule;
        let open = Schedule::open(1000.0, 4);
        assert!(reads_can_wait(&open, false));
        assert!(!reads_can_wait(&open, true), "HTTP/2");
        assert!(
            !reads_can_wait(&Schedule::closed(4), false),
            "a closed loop"
        );
        let fresh = Schedule {
            keepalive: false,
            ..open
        };
        assert!(!reads_can_wait(&fresh, false), "a connection per request");
        let pipelined = Schedule {
            pipeline: 2,
            ..open
        };
        assert!(!reads_can_wait(&pipelined, false), "pipelining");
    }

    use super::*;

    use std::io::Write as _;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd as _;
    use std::time::{SystemTime, UNIX_EPOCH};

    #[test]
    fn a_received_segment_carries_the_kernels_stamp() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = Socket::from(TcpStream::connect(listener.local_addr().unwrap()).unwrap());
        enable(&client, false).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        // The kernel may switch receive stamping on a moment after the first
        // socket asks (a deferred static key): the first segments can come
        // unstamped, so send until one is stamped.
        for _ in 0..100 {
            let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
            server.write_all(b"HTTP/1.1 200 OK\r\n\r\n").unwrap();
            let (mut buf, mut control) = ([0u8; 64], [0u8; CONTROL_BYTES]);
            let (n, stamp) = recv(client.as_raw_fd(), &mut buf, &mut control).unwrap();
            let after = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
            assert_eq!(n, 19);
            if let Some(stamp) = stamp {
                assert!(
                    (before.as_nanos()..=after.as_nanos()).contains(&u128::from(stamp)),
                    "the stamp lies between the send and the read"
                );
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("no segment of 100 carried a software receive stamp");
    }

    #[test]
    fn a_sent_segment_leaves_the_kernels_send_stamp_in_the_error_queue() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = Socket::from(TcpStream::connect(listener.local_addr().unwrap()).unwrap());
        enable(&client, true).unwrap();
        let _server = listener.accept().unwrap();
        let mut control = [0u8; CONTROL_BYTES];
        assert_eq!(
            send_stamps(client.as_raw_fd(), &mut control),
            None,
            "nothing sent yet"
        );
        let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        (&client).write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        for _ in 0..100 {
            if let Some(stamp) = send_stamps(client.as_raw_fd(), &mut control) {
                let after = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
                assert!(
                    (before.as_nanos()..=after.as_nanos()).contains(&u128::from(stamp)),
                    "the stamp lies between the write and its reading"
                );
                assert_eq!(
                    send_stamps(client.as_raw_fd(), &mut control),
                    None,
                    "taken once"
                );
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("the write left no software send stamp in the error queue");
    }

    #[test]
    fn kernel_versions_are_read_from_the_release() {
        assert_eq!(kernel_version("6.18.44-fc-v657"), Some((6, 18)));
        assert_eq!(kernel_version("5.15.0-91-generic"), Some((5, 15)));
        assert_eq!(kernel_version("garbage"), None);
        assert!(kernel_version("5.19.1").unwrap() < URING_MIN_KERNEL);
    }

    #[test]
    fn a_stamp_is_moved_onto_the_run_clock_and_bounded_by_now() {
        assert_eq!(on_run_clock(1_500, 1_000, 10_000), 500);
        assert_eq!(on_run_clock(900, 1_000, 10_000), 0, "before the run began");
        assert_eq!(on_run_clock(20_000, 1_000, 10_000), 10_000, "after now");
    }
}
