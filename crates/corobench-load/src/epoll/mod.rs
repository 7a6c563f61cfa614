//! The epoll backend: one edge-triggered epoll set per thread. A request costs
//! one `send` and (usually) one `recv`; interest in writability is registered
//! only while a connect or a partial write is pending, so the steady state
//! makes no `epoll_ctl` calls at all.

mod sys;

use std::io::{self, Read as _};

use crate::conn::{self, Conn, Phase};
use crate::core::{Core, SWEEP_INTERVAL_NS, Shared, ThreadPlan, ThreadResult, Turn};
use crate::error::LoadError;
use crate::os;
use crate::recorder::ErrorKind;
use crate::response::Feed;

/// Bytes read per `recv`; larger responses take several.
const READ_BUFFER_BYTES: usize = 64 * 1024;
const EVENTS_PER_WAIT: usize = 1024;

/// Runs one generator thread until its share of the run is done.
pub(crate) fn run_thread(shared: &Shared, plan: &ThreadPlan) -> Result<ThreadResult, LoadError> {
    let epoll =
        sys::Epoll::new().map_err(|e| LoadError::os("cannot create an epoll instance", e))?;
    let mut worker = Worker {
        shared,
        epoll,
        conns: (0..plan.connections)
            .map(|_| Conn::new(shared.head_request))
            .collect(),
        idle: Vec::with_capacity(plan.connections as usize),
        listed: vec![false; plan.connections as usize],
        want_writable: vec![false; plan.connections as usize],
        core: Core::new(shared, plan),
    };
    let mut events = sys::empty_events(EVENTS_PER_WAIT);
    let mut buf = vec![0u8; READ_BUFFER_BYTES];
    let start = shared.clock.now_ns();
    for i in 0..worker.conns.len() {
        worker.open(i, start);
    }
    let mut next_sweep = start + SWEEP_INTERVAL_NS;
    loop {
        let now = shared.clock.now_ns();
        if worker.core.turn(shared, now) == Turn::Finish {
            break;
        }
        let timeout = worker.core.wait_ns(shared, now, !worker.idle.is_empty());
        let ready = worker
            .epoll
            .wait(&mut events, timeout)
            .map_err(|e| LoadError::os("epoll_wait failed", e))?;
        let now = shared.clock.now_ns();
        for event in &events[..ready] {
            let (token, flags) = (event.u64, event.events);
            worker.on_event(token, flags, now, &mut buf);
        }
        if worker.core.open_loop() {
            worker.dispatch_due(now);
        }
        if now >= next_sweep {
            worker.sweep(now);
            next_sweep = now + SWEEP_INTERVAL_NS;
        }
    }
    Ok(worker.core.finish(shared.clock.now_ns()))
}

struct Worker<'a> {
    shared: &'a Shared,
    epoll: sys::Epoll,
    conns: Vec<Conn>,
    /// Open loop: connected connections without a request, most recent last.
    idle: Vec<usize>,
    /// Whether a connection is already in `idle` (so it is never listed twice).
    listed: Vec<bool>,
    /// Whether writability is registered (connect or partial write pending).
    want_writable: Vec<bool>,
    core: Core,
}

impl Worker<'_> {
    fn open(&mut self, i: usize, now: u64) {
        let socket = match conn::start_connect(self.shared.addr) {
            Ok(socket) => socket,
            Err(error) => return self.connect_failed(i, &error, now),
        };
        let conn = &mut self.conns[i];
        conn.generation = conn.generation.wrapping_add(1);
        let fd = std::os::fd::AsRawFd::as_raw_fd(&socket);
        if let Err(error) = self
            .epoll
            .add(fd, conn.token(i), sys::READABLE | sys::WRITABLE)
        {
            return self.connect_failed(i, &error, now);
        }
        conn.socket = Some(socket);
        conn.phase = Phase::Connecting;
        conn.started_ns = now;
        self.want_writable[i] = true;
    }

    fn on_event(&mut self, token: u64, flags: u32, now: u64, buf: &mut [u8]) {
        let (i, generation) = conn::split_token(token);
        let Some(conn) = self.conns.get(i) else {
            return;
        };
        if conn.generation != generation || conn.socket.is_none() {
            return; // an event of a socket closed earlier in this batch
        }
        match conn.phase {
            Phase::Connecting => {
                if flags & (sys::WRITABLE | sys::ERROR | sys::PEER_CLOSED) != 0 {
                    self.finish_connect(i, now);
                }
                return; // nothing to read before the first request went out
            }
            Phase::Writing if flags & sys::WRITABLE != 0 => self.write(i, now),
            _ => {}
        }
        if flags & (sys::READABLE | sys::PEER_CLOSED | sys::ERROR) != 0 {
            self.read(i, now, buf, flags & (sys::PEER_CLOSED | sys::ERROR) != 0);
        }
    }

    fn finish_connect(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        let Some(socket) = conn.socket.as_ref() else {
            return;
        };
        let pending = socket
            .take_error()
            .and_then(|e| e.map_or_else(|| socket.peer_addr().map(drop), Err));
        if let Err(error) = pending {
            return self.connect_failed(i, &error, now);
        }
        conn.connected();
        self.set_writable_interest(i, false);
        self.became_free(i, now);
    }

    /// A connection can take a request: send one now, or (open loop) list it as idle.
    fn became_free(&mut self, i: usize, now: u64) {
        match self.core.next_request(now) {
            Some(intended) => self.send(i, intended, now),
            None if self.core.open_loop() && !self.listed[i] => {
                self.listed[i] = true;
                self.idle.push(i);
            }
            None => {}
        }
    }

    /// Open loop: hands every due request to an idle connection.
    fn dispatch_due(&mut self, now: u64) {
        while let Some(&i) = self.idle.last() {
            if self.conns[i].phase != Phase::Idle {
                self.idle.pop();
                self.listed[i] = false;
                continue;
            }
            let Some(intended) = self.core.next_request(now) else {
                break;
            };
            self.idle.pop();
            self.listed[i] = false;
            self.send(i, intended, now);
        }
    }

    fn send(&mut self, i: usize, intended: u64, now: u64) {
        let conn = &mut self.conns[i];
        conn.intended_ns = intended;
        conn.sent_ns = now;
        conn.started_ns = now;
        conn.written = 0;
        conn.phase = Phase::Writing;
        self.write(i, now);
    }

    fn write(&mut self, i: usize, now: u64) {
        let shared = self.shared;
        let request = &shared.request;
        let conn = &mut self.conns[i];
        let Some(socket) = conn.socket.as_ref() else {
            return;
        };
        loop {
            match socket.send_with_flags(&request[conn.written..], libc::MSG_NOSIGNAL) {
                Ok(n) => {
                    conn.written += n;
                    self.core.recorder.wrote_bytes(n);
                    if conn.written == request.len() {
                        conn.phase = Phase::Reading;
                        return self.set_writable_interest(i, false);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return self.set_writable_interest(i, true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.request_failed(i, ErrorKind::Write, now),
            }
        }
    }

    fn set_writable_interest(&mut self, i: usize, want: bool) {
        if self.want_writable[i] == want {
            return;
        }
        let conn = &self.conns[i];
        let Some(socket) = conn.socket.as_ref() else {
            return;
        };
        let interest = if want {
            sys::READABLE | sys::WRITABLE
        } else {
            sys::READABLE
        };
        let fd = std::os::fd::AsRawFd::as_raw_fd(socket);
        if self.epoll.modify(fd, conn.token(i), interest).is_ok() {
            self.want_writable[i] = want;
        }
    }

    /// Reads what arrived. Stops at a short read (the socket is drained, and
    /// edge-triggered epoll reports the next arrival) unless the peer closed,
    /// in which case it reads on to see the end of the stream.
    fn read(&mut self, i: usize, now: u64, buf: &mut [u8], peer_closed: bool) {
        loop {
            let Some(socket) = self.conns[i].socket.as_ref() else {
                return;
            };
            match (&*socket).read(buf) {
                Ok(0) => return self.on_eof(i, now),
                Ok(n) => {
                    self.core.recorder.read_bytes(n, now);
                    if !self.on_bytes(i, &buf[..n], now) || (n < buf.len() && !peer_closed) {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    if self.conns[i].busy() {
                        self.request_failed(i, ErrorKind::Read, now);
                    } else {
                        self.reopen(i, now);
                    }
                    return;
                }
            }
        }
    }

    /// Frames received bytes; returns whether the connection is still open.
    fn on_bytes(&mut self, i: usize, bytes: &[u8], now: u64) -> bool {
        let conn = &mut self.conns[i];
        if !conn.busy() {
            // Bytes nobody asked for: the server is not speaking HTTP/1.1 with us.
            self.core.recorder.error(ErrorKind::Malformed, now);
            self.reopen(i, now);
            return false;
        }
        match conn.framer.feed(bytes) {
            Ok(Feed::NeedMore) => true,
            Ok(Feed::Complete {
                consumed,
                status,
                keep_alive,
            }) => {
                let reusable =
                    keep_alive && conn.phase == Phase::Reading && consumed == bytes.len();
                let (intended, sent) = (conn.intended_ns, conn.sent_ns);
                self.core.response(status, intended, sent, now);
                if consumed < bytes.len() {
                    self.core.recorder.error(ErrorKind::Malformed, now);
                }
                if !reusable {
                    self.reopen(i, now);
                    return false;
                }
                self.conns[i].phase = Phase::Idle;
                self.became_free(i, now);
                true
            }
            Err(_) => {
                self.request_failed(i, ErrorKind::Malformed, now);
                false
            }
        }
    }

    fn on_eof(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        if let Some(status) = conn.framer.finish_at_eof() {
            let (intended, sent) = (conn.intended_ns, conn.sent_ns);
            self.core.response(status, intended, sent, now);
            return self.reopen(i, now);
        }
        if conn.busy() {
            self.request_failed(i, ErrorKind::Read, now);
        } else {
            self.reopen(i, now); // an idle keep-alive connection closed by the server
        }
    }

    fn request_failed(&mut self, i: usize, kind: ErrorKind, now: u64) {
        let intended = self.conns[i].intended_ns;
        self.core.request_failed(kind, intended, now);
        self.reopen(i, now);
    }

    fn connect_failed(&mut self, i: usize, error: &io::Error, now: u64) {
        let kind = if os::is_fd_exhaustion(error) {
            ErrorKind::FdExhausted
        } else {
            ErrorKind::Connect
        };
        self.core.connect_failed(kind, now);
        self.conns[i].close_with_backoff(now);
        self.want_writable[i] = false;
    }

    fn reopen(&mut self, i: usize, now: u64) {
        self.conns[i].close(now);
        self.want_writable[i] = false;
        self.open(i, now);
    }

    /// Times out slow requests and connects, and reopens closed connections.
    fn sweep(&mut self, now: u64) {
        let timeout = self.shared.timeout_ns;
        for i in 0..self.conns.len() {
            let conn = &self.conns[i];
            match conn.phase {
                Phase::Closed if conn.retry_at_ns <= now => self.open(i, now),
                Phase::Connecting if now.saturating_sub(conn.started_ns) > timeout => {
                    let error = io::Error::from(io::ErrorKind::TimedOut);
                    self.connect_failed(i, &error, now);
                }
                Phase::Writing | Phase::Reading if now.saturating_sub(conn.sent_ns) > timeout => {
                    self.request_failed(i, ErrorKind::Timeout, now);
                }
                _ => {}
            }
        }
    }
}
