//! The connection logic both backends share. A backend owns the I/O (how a
//! socket is opened, written and read); it reports what happened to the
//! [`Driver`], which decides what every connection does next.

use std::io;

use crate::conn::{Conn, Phase};
use crate::core::{Core, InFlight, Shared, ThreadPlan, Turn};
use crate::os;
use crate::ready::Readiness;
use crate::recorder::ErrorKind;
use crate::response::Feed;
use crate::session::Session;
use crate::tls::ThreadTls;

mod h2;
mod handshake;
mod writes;

/// What a backend did with bytes it was asked to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Write {
    /// This many bytes went out (or are certain to: a completion-based
    /// backend may report a queued write that only a failure would undo, see
    /// [`Driver::write_failed`]); if fewer than asked, the backend calls
    /// [`Driver::writable`] once the socket can take more.
    Wrote(usize),
    /// Queued whole; the backend calls [`Driver::write_completed`] (or
    /// [`Driver::write_failed`]) when it is done, and no other write of the
    /// connection may start before.
    Pending,
    Failed,
}

/// The I/O a backend performs for the driver.
pub(crate) trait Io {
    /// Opens a socket for `conn`, starts connecting, and watches it.
    fn connect(
        &mut self,
        index: usize,
        conn: &mut Conn,
        addr: std::net::SocketAddr,
    ) -> io::Result<()>;
    /// Writes (or queues) `bytes` on `conn`'s socket.
    fn write(&mut self, index: usize, conn: &Conn, bytes: &[u8]) -> Write;
    /// The connection is about to be dropped.
    fn closing(&mut self, index: usize, conn: &mut Conn);
}

/// Connections, their schedule and their outcomes, for one thread.
#[derive(Debug)]
pub(crate) struct Driver<'a, I> {
    pub(crate) shared: &'a Shared,
    pub(crate) io: I,
    pub(crate) conns: Vec<Conn>,
    pub(crate) core: Core,
    /// Open loop: connected connections without a request, most recent last.
    idle: Vec<usize>,
    /// Whether a connection is already in `idle` (never listed twice).
    listed: Vec<bool>,
    /// Open loop, before the schedule: which connections are ready.
    ready: Readiness,
    /// TLS: this thread's configuration (with a session cache of its own).
    pub(crate) tls: Option<ThreadTls>,
    /// TLS: the plaintext of one read, framed before the next read.
    pub(crate) plain: Vec<u8>,
}

impl<'a, I: Io> Driver<'a, I> {
    pub(crate) fn new(shared: &'a Shared, plan: &ThreadPlan, io: I) -> Self {
        let n = plan.connections as usize;
        let tls = shared.tls.is_some();
        let http2 = shared
            .h2
            .as_ref()
            .map(|setup| (setup.options, setup.background_streams()));
        Self {
            shared,
            io,
            conns: (0..n)
                .map(|_| Conn::new(shared.head_request, shared.pipeline, tls, http2))
                .collect(),
            core: Core::new(shared, plan),
            idle: Vec::with_capacity(n),
            listed: vec![false; n],
            ready: Readiness {
                conns: vec![false; n],
                ..Readiness::default()
            },
            tls: shared.tls.as_ref().map(crate::tls::TlsSetup::for_thread),
            plain: Vec::new(),
        }
    }

    /// One turn of the thread's loop (see [`Core::turn`]). When a drain
    /// ends with requests still unanswered, they time out now: the drain
    /// waited the whole timeout for them.
    pub(crate) fn turn(&mut self, now: u64) -> Turn {
        if self.core.open_loop() && !self.core.scheduling() {
            self.await_schedule(now);
        }
        let turn = self.core.turn(self.shared, now);
        let conns = &self.conns;
        self.core
            .publish_live(self.shared, now, || open_connections(conns));
        if turn == Turn::Finish && self.core.draining() {
            for i in 0..self.conns.len() {
                self.fail_in_flight(i, ErrorKind::Timeout, now);
            }
        }
        turn
    }

    /// Open loop, before the schedule: tells the other threads once this
    /// one is ready (every connection ready, or the timeout passed since
    /// they were opened; a connection per request has none to open), and
    /// begins the schedule once they all are.
    fn await_schedule(&mut self, now: u64) {
        let ready = &self.ready;
        if !ready.arrived
            && (ready.count == self.conns.len()
                || !self.shared.keepalive
                || now.saturating_sub(ready.opened_ns) >= self.shared.timeout_ns)
        {
            self.ready.arrived = true;
            self.shared.ready.arrive(now);
        }
        if let Some(zero_ns) = self.shared.ready.zero_ns() {
            self.core.start_schedule(self.shared, zero_ns);
        }
    }

    /// Whether connection `i` should send a priming request now.
    fn wants_priming(&self, i: usize) -> bool {
        let conn = &self.conns[i];
        self.shared.prime
            && self.shared.keepalive
            && self.core.open_loop()
            && !self.core.scheduling()
            && !self.ready.is_ready(i)
            && conn.phase == Phase::Idle
            && conn.in_flight.is_empty()
    }

    /// Whether an idle connection waits for the schedule (the thread must wake on time).
    pub(crate) fn can_send(&self) -> bool {
        !self.idle.is_empty()
    }

    /// Whether the thread may sleep through responses until its next send
    /// is due. In an open loop nothing waits on a response: the schedule,
    /// not the answer, says when the next request leaves, and a free
    /// connection is already at hand. With the kernel's receive stamp the
    /// latency does not depend on when the response is read either, so
    /// waking for each one (an open loop's second wake-up per request) buys
    /// nothing. Once no connection is free, or nothing more is to be sent
    /// (the window has closed, or an `-n` run sent its last request) and
    /// the answers owed are awaited, each response wakes the thread again.
    pub(crate) fn responses_can_wait(&self) -> bool {
        self.shared.reads_can_wait
            && self.core.scheduling()
            && !self.core.window_closed()
            && self.core.next_due_ns().is_some()
            && self.can_send()
    }

    pub(crate) fn open_all(&mut self, now: u64) {
        self.ready.opened_ns = now;
        if !self.shared.keepalive {
            // Each connection opens with its first request: open the window
            // first if it is due, so those requests belong to it.
            self.core.turn(self.shared, now);
        }
        for i in 0..self.conns.len() {
            self.start(i, now);
        }
    }

    /// Puts a closed connection back to work: a kept-alive one reconnects
    /// at once; with a connection per request, it waits for its next request.
    fn start(&mut self, i: usize, now: u64) {
        if self.shared.keepalive {
            self.open(i, now);
        } else {
            self.became_free(i, now);
        }
    }

    pub(crate) fn open(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        // Its first opening is the connection's own; a kept-alive one
        // opened again was closed by the server.
        if self.shared.keepalive && conn.generation > 0 {
            self.core.recorder.reconnected();
        }
        let conn = &mut self.conns[i];
        conn.generation = conn.generation.wrapping_add(1);
        conn.started_ns = now;
        match self.io.connect(i, conn, self.shared.addr) {
            Ok(()) => conn.phase = Phase::Connecting,
            Err(error) => self.connect_failed(i, &error, now),
        }
    }

    /// The connect finished: over TLS the handshake begins, in cleartext
    /// the connection is ready.
    pub(crate) fn connected(&mut self, i: usize, now: u64) {
        if self.opening_counts(i) {
            let took_ns = now.saturating_sub(self.conns[i].started_ns);
            self.core.recorder.connected(took_ns);
        }
        let conn = &mut self.conns[i];
        conn.connected_ns = now;
        if matches!(conn.session, Session::Tls(_)) {
            self.begin_handshake(i, now);
        } else {
            self.established(i, now);
        }
    }

    /// Whether opening connection `i` (its connect and handshake) may be
    /// recorded: a connection opened for a request counts with that request,
    /// so one opened for a warm-up request belongs to the warm-up even when
    /// it is established inside the window.
    pub(crate) fn opening_counts(&self, i: usize) -> bool {
        self.conns[i]
            .in_flight
            .oldest()
            .is_none_or(|request| self.core.outcome_counts(*request))
    }

    /// The connection can carry requests. With a connection per request,
    /// the request that opened it goes out now.
    pub(crate) fn established(&mut self, i: usize, now: u64) {
        if self.conns[i].h2.is_some() {
            return self.h2_established(i, now);
        }
        let conn = &mut self.conns[i];
        conn.connected();
        if !self.shared.prime {
            self.ready.mark(i);
        }
        match conn.in_flight.len() {
            0 => self.became_free(i, now),
            waiting => self.start_write(i, waiting, now),
        }
    }

    /// The connect failed: the request that opened the connection (if it
    /// was opened for one) fails with it; either way the connection backs off.
    pub(crate) fn connect_failed(&mut self, i: usize, error: &io::Error, now: u64) {
        let kind = if os::is_fd_exhaustion(error) {
            ErrorKind::FdExhausted
        } else if os::is_port_exhaustion(error) {
            ErrorKind::PortsExhausted
        } else {
            ErrorKind::Connect
        };
        self.opening_failed(i, kind, now);
    }

    /// Opening the connection failed (its connect or its handshake): the
    /// request that opened it (if it was opened for one) fails as `kind`,
    /// otherwise the failure is counted alone; either way the connection
    /// backs off, so a failing server does not become a busy loop.
    pub(crate) fn opening_failed(&mut self, i: usize, kind: ErrorKind, now: u64) {
        if self.conns[i].in_flight.is_empty() {
            self.core.error_without_request(kind, now);
        } else {
            self.fail_in_flight(i, kind, now);
        }
        self.io.closing(i, &mut self.conns[i]);
        self.conns[i].close_with_backoff(now);
    }

    /// A connection can take requests: send them now, or (open loop) list it as idle.
    fn became_free(&mut self, i: usize, now: u64) {
        if !self.shared.keepalive {
            match self.core.next_request(now) {
                Some(request) => self.connect_for(i, request, now),
                None => self.list_idle(i),
            }
            return;
        }
        self.top_up(i, now);
    }

    /// A kept-alive connection has room for requests: fills it, or (open
    /// loop, nothing due) lists it as idle.
    pub(super) fn top_up(&mut self, i: usize, now: u64) {
        if self.conns[i].h2.is_some() {
            return self.h2_fill(i, now);
        }
        if self.wants_priming(i) {
            let request = self.core.priming_request(now);
            self.conns[i].in_flight.push(request);
            self.start_write(i, 1, now);
            return;
        }
        if self.shared.keepalive && !self.fill(i, now) {
            self.list_idle(i);
        }
    }

    fn list_idle(&mut self, i: usize) {
        if self.core.open_loop() && !self.listed[i] {
            self.listed[i] = true;
            self.idle.push(i);
        }
    }

    /// Whether connection `i` can take a request right now.
    fn is_free(&self, i: usize) -> bool {
        let conn = &self.conns[i];
        if self.shared.keepalive && conn.h2.is_some() {
            self.h2_room(i) > 0
        } else if self.shared.keepalive {
            conn.phase == Phase::Idle
        } else {
            conn.phase == Phase::Closed && conn.in_flight.is_empty()
        }
    }

    /// Open loop: hands every due request to an idle connection.
    pub(crate) fn dispatch_due(&mut self, now: u64) {
        while let Some(&i) = self.idle.last() {
            if !self.is_free(i) {
                self.idle.pop();
                self.listed[i] = false;
                continue;
            }
            let Some(request) = self.core.next_request(now) else {
                break;
            };
            if self.shared.keepalive && self.conns[i].h2.is_some() {
                // A connection with room for more streams stays listed.
                self.h2_dispatch(i, request, now);
                continue;
            }
            self.idle.pop();
            self.listed[i] = false;
            if self.shared.keepalive {
                self.conns[i].in_flight.push(request);
                self.start_write(i, 1, now);
            } else {
                self.connect_for(i, request, now);
            }
        }
    }

    /// Connection per request: opens a connection for `request`, which
    /// is in flight from now on, so its latency includes the connect.
    fn connect_for(&mut self, i: usize, request: InFlight, now: u64) {
        self.conns[i].in_flight.push(request);
        self.open(i, now);
    }

    /// Closed loop on a kept-alive connection: tops its requests in flight
    /// up to the pipeline depth, all in one write. Returns whether any
    /// request is in flight afterwards.
    pub(super) fn fill(&mut self, i: usize, now: u64) -> bool {
        let conn = &mut self.conns[i];
        if !self.shared.keepalive || !matches!(conn.phase, Phase::Idle | Phase::Reading) {
            // One request per connection, or closed, connecting, or a write
            // under way (topped up once it is done).
            return !conn.in_flight.is_empty();
        }
        // A pipelined connection sends its next batch once every request of
        // the last one is answered: one write of N requests, as TechEmpower's
        // wrk pipelining script does. Topping up after every read wrote a
        // few requests per syscall whenever responses arrived in pieces: 1.3
        // times wrk's CPU per request, and smaller batches for the server.
        let free = conn.in_flight.depth() - conn.in_flight.len();
        if conn.phase == Phase::Reading
            && !conn.in_flight.is_empty()
            && free < conn.in_flight.depth()
        {
            return true;
        }
        let mut added = 0;
        while !conn.in_flight.is_full() {
            let Some(request) = self.core.next_request(now) else {
                break;
            };
            conn.in_flight.push(request);
            added += 1;
        }
        if added > 0 {
            self.start_write(i, added, now);
        }
        !self.conns[i].in_flight.is_empty()
    }

    /// The kernel sent connection `i`'s latest write at `at` (a send
    /// stamp): see [`crate::conn::InFlightRing::sent_at`].
    pub(crate) fn sent_at(&mut self, i: usize, at: u64) {
        let closed = !self.core.open_loop();
        self.conns[i].in_flight.sent_at(at, closed);
    }

    /// Frames received bytes, which may hold several responses (pipelining);
    /// returns whether the connection is still open. `received` is when
    /// they arrived (the kernel's stamp, or `now`): responses complete
    /// then; whatever is sent next leaves `now`.
    pub(crate) fn bytes(&mut self, i: usize, bytes: &[u8], received: u64, now: u64) -> bool {
        self.core.recorder.read_bytes(bytes.len(), now);
        if self.conns[i].session.decrypts() {
            return self.tls_bytes(i, bytes, received, now);
        }
        self.frame(i, bytes, received, now)
    }

    /// Frames plaintext (see [`Self::bytes`]).
    pub(crate) fn frame(&mut self, i: usize, bytes: &[u8], received: u64, now: u64) -> bool {
        if self.conns[i].h2.is_some() {
            return self.h2_frame(i, bytes, received, now);
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            let conn = &mut self.conns[i];
            if conn.in_flight.is_empty() {
                // Bytes nobody asked for: the server is not speaking HTTP/1.1 with us.
                self.core.error_without_request(ErrorKind::Malformed, now);
                self.reopen(i, now);
                return false;
            }
            let first_bytes = conn.framer.is_idle();
            match conn.framer.feed(rest) {
                Ok(Feed::NeedMore) => break,
                Ok(Feed::Complete {
                    consumed,
                    status,
                    keep_alive,
                }) => {
                    rest = &rest[consumed..];
                    if !self.answered(i, (status, keep_alive), rest, received, now) {
                        return false;
                    }
                }
                Err(_) => {
                    if first_bytes && looks_like_tls(rest) {
                        self.core.recorder.tls_answer();
                    }
                    self.abandon(i, ErrorKind::Malformed, now);
                    return false;
                }
            }
        }
        self.top_up(i, now);
        true
    }

    /// The oldest request in flight got its response (`rest` is what
    /// followed it in the same read). Returns whether the connection stays.
    fn answered(
        &mut self,
        i: usize,
        (status, keep_alive): (u16, bool),
        rest: &[u8],
        received: u64,
        now: u64,
    ) -> bool {
        self.ready.mark(i);
        let conn = &mut self.conns[i];
        if let Some(request) = conn.in_flight.pop() {
            self.core.response(status, request, received);
            if received < now {
                self.core.recorder.read_late(now - received);
            }
        }
        // Every request answered before all were written is not HTTP/1.1
        // as we speak it; a connection per request ends after its response.
        let answered_early = conn.in_flight.is_empty() && conn.phase == Phase::Writing;
        if !keep_alive || !self.shared.keepalive || answered_early {
            if !rest.is_empty() {
                // The server ends the connection: bytes after it are nobody's.
                self.core.error_without_request(ErrorKind::Malformed, now);
            }
            // The requests behind this response will not be answered on it.
            self.abandon(i, ErrorKind::Read, now);
            return false;
        }
        if conn.in_flight.is_empty() {
            conn.phase = Phase::Idle;
        }
        true
    }

    /// The server closed the connection.
    pub(crate) fn eof(&mut self, i: usize, now: u64) {
        if self.conns[i].phase == Phase::Handshaking {
            return self.opening_failed(i, ErrorKind::Handshake, now);
        }
        let conn = &mut self.conns[i];
        if conn.h2.is_some() {
            return self.abandon(i, ErrorKind::Read, now);
        }
        if let Some(status) = conn.framer.finish_at_eof() {
            if let Some(request) = conn.in_flight.pop() {
                self.core.response(status, request, now);
            }
        }
        // Requests still in flight (none on an idle keep-alive connection
        // the server closed) end without a response.
        self.abandon(i, ErrorKind::Read, now);
    }

    /// Reading failed (reset).
    pub(crate) fn read_failed(&mut self, i: usize, now: u64) {
        if self.conns[i].phase == Phase::Handshaking {
            return self.opening_failed(i, ErrorKind::Handshake, now);
        }
        self.abandon(i, ErrorKind::Read, now);
    }

    /// The connection is lost: every request in flight on it fails, each
    /// counted once as `kind`; then it is reopened.
    pub(crate) fn abandon(&mut self, i: usize, kind: ErrorKind, now: u64) {
        self.fail_in_flight(i, kind, now);
        self.reopen(i, now);
    }

    fn fail_in_flight(&mut self, i: usize, kind: ErrorKind, now: u64) {
        if !self.conns[i].in_flight.is_empty() {
            // A priming request that failed still readies its connection:
            // the schedule must not wait for a server that cannot answer.
            self.ready.mark(i);
        }
        while let Some(request) = self.conns[i].in_flight.pop() {
            self.core.request_failed(kind, request, now);
        }
        self.h2_fail_all(i, kind, now);
    }

    fn reopen(&mut self, i: usize, now: u64) {
        self.io.closing(i, &mut self.conns[i]);
        self.conns[i].close(now);
        self.start(i, now);
    }

    /// Times out slow requests and connects, and reopens closed connections.
    pub(crate) fn sweep(&mut self, now: u64) {
        let timeout = self.shared.timeout_ns;
        for i in 0..self.conns.len() {
            if self.conns[i].h2_ready() {
                self.h2_sweep(i, now);
                continue;
            }
            let conn = &self.conns[i];
            let oldest_sent_ns = conn.in_flight.oldest().map_or(now, |r| r.sent_ns);
            match conn.phase {
                // A draining thread sends nothing more: no reconnects.
                Phase::Closed if conn.retry_at_ns <= now && !self.core.draining() => {
                    self.start(i, now);
                }
                Phase::Connecting if now.saturating_sub(conn.started_ns) > timeout => {
                    self.connect_failed(i, &io::Error::from(io::ErrorKind::TimedOut), now);
                }
                Phase::Handshaking if now.saturating_sub(conn.started_ns) > timeout => {
                    self.opening_failed(i, ErrorKind::Handshake, now);
                }
                Phase::Writing | Phase::Reading if now.saturating_sub(oldest_sent_ns) > timeout => {
                    self.abandon(i, ErrorKind::Timeout, now);
                }
                _ => {}
            }
        }
    }

    /// Closes every connection when the thread ends.
    pub(crate) fn close_all(&mut self) {
        for i in 0..self.conns.len() {
            self.io.closing(i, &mut self.conns[i]);
            self.conns[i].close(u64::MAX);
        }
    }
}

/// Connections established and not closed.
fn open_connections(conns: &[Conn]) -> u64 {
    conns.iter().filter(|conn| conn.is_open()).count() as u64
}

/// Whether bytes begin like a TLS record (a type from 20 to 23, then
/// version 3.x): what a TLS server answers a plaintext request with.
fn looks_like_tls(bytes: &[u8]) -> bool {
    matches!(bytes, [20..=23, 3, 0..=4, ..])
}
