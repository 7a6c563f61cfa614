//! The epoll backend: one edge-triggered epoll set per thread. A request costs
//! one `send` and (usually) one `recv`; interest in writability is registered
//! only while a connect or a partial write is pending, so the steady state
//! makes no `epoll_ctl` calls at all.

mod sys;

use std::io::{self, Read as _};
use std::net::SocketAddr;
use std::os::fd::AsRawFd as _;

use crate::conn::{self, Conn, Phase};
use crate::core::{SWEEP_INTERVAL_NS, Shared, ThreadPlan, ThreadResult, Turn};
use crate::driver::{Driver, Io, Write};
use crate::error::LoadError;
use crate::stamps;
use crate::tls::ktls;

/// Bytes read per `recv`; larger responses take several.
const READ_BUFFER_BYTES: usize = 64 * 1024;
const EVENTS_PER_WAIT: usize = 1024;

/// Runs one generator thread until its share of the run is done.
pub(crate) fn run_thread(shared: &Shared, plan: &ThreadPlan) -> Result<ThreadResult, LoadError> {
    let epoll =
        sys::Epoll::new().map_err(|e| LoadError::os("cannot create an epoll instance", e))?;
    let io = EpollIo {
        epoll,
        want_writable: vec![false; plan.connections as usize],
        stamps: shared
            .kernel_stamps
            .then(|| Box::new([0u8; stamps::CONTROL_BYTES])),
        send_stamps: shared.send_stamps,
        record_control: shared
            .tls
            .as_ref()
            .is_some_and(|tls| tls.ktls)
            .then(|| Box::new([0u8; ktls::CONTROL_BYTES])),
    };
    let mut driver = Driver::new(shared, plan, io);
    let mut events = sys::empty_events(EVENTS_PER_WAIT);
    let mut buf = vec![0u8; READ_BUFFER_BYTES];
    let start = shared.clock.now_ns();
    driver.open_all(start);
    let mut next_sweep = start.saturating_add(SWEEP_INTERVAL_NS);
    loop {
        let now = shared.clock.now_ns();
        if driver.turn(now) == Turn::Finish {
            break;
        }
        let timeout = driver.core.wait_ns(now, driver.can_send());
        let ready = driver
            .io
            .epoll
            .wait(&mut events, timeout)
            .map_err(|e| LoadError::os("epoll_wait failed", e))?;
        let now = shared.clock.now_ns();
        for event in &events[..ready] {
            let (token, flags) = (event.u64, event.events);
            on_event(&mut driver, token, flags, now, &mut buf);
        }
        if driver.core.open_loop() {
            driver.dispatch_due(now);
        }
        if now >= next_sweep {
            driver.sweep(now);
            next_sweep = now.saturating_add(SWEEP_INTERVAL_NS);
        }
    }
    driver.close_all();
    Ok(driver.core.finish(shared.clock.now_ns()))
}

fn on_event(driver: &mut Driver<'_, EpollIo>, token: u64, flags: u32, now: u64, buf: &mut [u8]) {
    let (i, generation) = conn::split_token(token);
    let Some(conn) = driver.conns.get(i) else {
        return;
    };
    if conn.generation != generation || conn.socket.is_none() {
        return; // an event of a socket closed earlier in this batch
    }
    match conn.phase {
        Phase::Connecting => {
            if flags & (sys::WRITABLE | sys::ERROR | sys::PEER_CLOSED) != 0 {
                finish_connect(driver, i, now);
            }
            return; // nothing to read before the first request went out
        }
        Phase::Writing | Phase::Handshaking if flags & sys::WRITABLE != 0 => {
            driver.writable(i, now);
        }
        _ => {}
    }
    if driver.io.send_stamps && flags & sys::ERROR != 0 {
        take_send_stamps(driver, i, now);
    }
    if flags & (sys::READABLE | sys::PEER_CLOSED | sys::ERROR) != 0 {
        read(
            driver,
            i,
            now,
            buf,
            flags & (sys::PEER_CLOSED | sys::ERROR) != 0,
        );
    }
}

/// Moves the send time of the requests in flight on connection `i` to the
/// moment the kernel sent them, from the stamps in its error queue.
fn take_send_stamps(driver: &mut Driver<'_, EpollIo>, i: usize, now: u64) {
    let (Some(socket), Some(control)) = (
        driver.conns[i].socket.as_ref(),
        driver.io.stamps.as_deref_mut(),
    ) else {
        return;
    };
    if let Some(at) = stamps::send_stamps(socket.as_raw_fd(), control) {
        let at = stamps::on_run_clock(at, driver.shared.base_unix_ns, now);
        driver.sent_at(i, at);
    }
}

fn finish_connect(driver: &mut Driver<'_, EpollIo>, i: usize, now: u64) {
    let Some(socket) = driver.conns[i].socket.as_ref() else {
        return;
    };
    let outcome = socket
        .take_error()
        .and_then(|e| e.map_or_else(|| socket.peer_addr().map(drop), Err));
    match outcome {
        Ok(()) => {
            driver.io.set_writable_interest(i, &driver.conns[i], false);
            driver.connected(i, now);
        }
        Err(error) => driver.connect_failed(i, &error, now),
    }
}

/// Reads what arrived. Stops at a short read (the socket is drained, and
/// edge-triggered epoll reports the next arrival) unless the peer closed,
/// in which case it reads on to see the end of the stream.
fn read(driver: &mut Driver<'_, EpollIo>, i: usize, now: u64, buf: &mut [u8], peer_closed: bool) {
    loop {
        let Some(socket) = driver.conns[i].socket.as_ref() else {
            return;
        };
        if driver.conns[i].session.kernel() {
            if read_kernel_record(driver, i, now, buf, peer_closed) {
                continue;
            }
            return;
        }
        let received = match driver.io.stamps.as_deref_mut() {
            None => (&*socket).read(buf).map(|n| (n, now)),
            Some(control) => stamps::recv(socket.as_raw_fd(), buf, control).map(|(n, stamp)| {
                let base = driver.shared.base_unix_ns;
                (
                    n,
                    stamp.map_or(now, |at| stamps::on_run_clock(at, base, now)),
                )
            }),
        };
        match received {
            Ok((0, _)) => return driver.eof(i, now),
            Ok((n, at)) => {
                if !driver.bytes(i, &buf[..n], at, now) || (n < buf.len() && !peer_closed) {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return driver.read_failed(i, now),
        }
    }
}

/// kTLS: reads one record's plaintext, with its type. Returns whether to
/// read on (a control record was handled, or more may be waiting).
fn read_kernel_record(
    driver: &mut Driver<'_, EpollIo>,
    i: usize,
    now: u64,
    buf: &mut [u8],
    peer_closed: bool,
) -> bool {
    let (Some(socket), Some(control)) = (
        driver.conns[i].socket.as_ref(),
        driver.io.record_control.as_deref_mut(),
    ) else {
        return false;
    };
    match ktls::recv(socket.as_raw_fd(), buf, control) {
        Ok((0, _)) => {
            driver.eof(i, now);
            false
        }
        Ok((n, ktls::APPLICATION_DATA)) => {
            driver.bytes(i, &buf[..n], now, now) && (n == buf.len() || peer_closed)
        }
        Ok((n, record_type)) => {
            let generation = driver.conns[i].generation;
            driver.kernel_record(i, record_type, &buf[..n], now);
            driver.conns[i].generation == generation && driver.conns[i].socket.is_some()
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => true,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
        Err(_) => {
            driver.read_failed(i, now);
            false
        }
    }
}

/// The epoll side of the I/O: sockets registered edge-triggered.
#[derive(Debug)]
struct EpollIo {
    epoll: sys::Epoll,
    /// Whether writability is registered (connect or partial write pending).
    want_writable: Vec<bool>,
    /// With kernel receive stamps: the control buffer `recvmsg` fills.
    stamps: Option<Box<[u8; stamps::CONTROL_BYTES]>>,
    /// Requests are stamped when the kernel sends them.
    send_stamps: bool,
    /// kTLS: the control buffer `recvmsg` puts each record's type in.
    record_control: Option<Box<[u8; ktls::CONTROL_BYTES]>>,
}

impl EpollIo {
    fn set_writable_interest(&mut self, i: usize, conn: &Conn, want: bool) {
        if self.want_writable[i] == want {
            return;
        }
        let Some(socket) = conn.socket.as_ref() else {
            return;
        };
        let interest = if want {
            sys::READABLE | sys::WRITABLE
        } else {
            sys::READABLE
        };
        if self
            .epoll
            .modify(socket.as_raw_fd(), conn.token(i), interest)
            .is_ok()
        {
            self.want_writable[i] = want;
        }
    }
}

impl Io for EpollIo {
    fn connect(&mut self, i: usize, conn: &mut Conn, addr: SocketAddr) -> io::Result<()> {
        let socket = conn::start_connect(addr)?;
        if self.stamps.is_some() {
            stamps::enable(&socket, self.send_stamps)?;
        }
        self.epoll.add(
            socket.as_raw_fd(),
            conn.token(i),
            sys::READABLE | sys::WRITABLE,
        )?;
        conn.socket = Some(socket);
        self.want_writable[i] = true;
        Ok(())
    }

    fn write(&mut self, i: usize, conn: &Conn, bytes: &[u8]) -> Write {
        let Some(socket) = conn.socket.as_ref() else {
            return Write::Failed;
        };
        let mut written = 0;
        while written < bytes.len() {
            match socket.send_with_flags(&bytes[written..], libc::MSG_NOSIGNAL) {
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Write::Failed,
            }
        }
        self.set_writable_interest(i, conn, written < bytes.len());
        Write::Wrote(written)
    }

    fn closing(&mut self, i: usize, _conn: &mut Conn) {
        // Closing the descriptor removes it from the epoll set.
        self.want_writable[i] = false;
    }
}
