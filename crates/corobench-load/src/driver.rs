//! The connection logic both backends share. A backend owns the I/O (how a
//! socket is opened, written and read); it reports what happened to the
//! [`Driver`], which decides what every connection does next.

use std::io;

use crate::conn::{Conn, Phase};
use crate::core::{Core, InFlight, Shared, ThreadPlan};
use crate::os;
use crate::recorder::ErrorKind;
use crate::response::Feed;

/// What a backend did with bytes it was asked to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Write {
    /// This many bytes went out (or are certain to: a completion-based
    /// backend may report a queued write that only a failure would undo, see
    /// [`Driver::write_failed`]); if fewer than asked, the backend calls
    /// [`Driver::writable`] once the socket can take more.
    Wrote(usize),
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
    fn write(&mut self, index: usize, conn: &mut Conn, bytes: &[u8]) -> Write;
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
}

impl<'a, I: Io> Driver<'a, I> {
    pub(crate) fn new(shared: &'a Shared, plan: &ThreadPlan, io: I) -> Self {
        let n = plan.connections as usize;
        Self {
            shared,
            io,
            conns: (0..n).map(|_| Conn::new(shared.head_request)).collect(),
            core: Core::new(shared, plan),
            idle: Vec::with_capacity(n),
            listed: vec![false; n],
        }
    }

    /// Whether an idle connection waits for the schedule (the thread must wake on time).
    pub(crate) fn can_send(&self) -> bool {
        !self.idle.is_empty()
    }

    pub(crate) fn open_all(&mut self, now: u64) {
        for i in 0..self.conns.len() {
            self.open(i, now);
        }
    }

    pub(crate) fn open(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        conn.generation = conn.generation.wrapping_add(1);
        conn.started_ns = now;
        match self.io.connect(i, conn, self.shared.addr) {
            Ok(()) => conn.phase = Phase::Connecting,
            Err(error) => self.connect_failed(i, &error, now),
        }
    }

    /// The connect finished.
    pub(crate) fn connected(&mut self, i: usize, now: u64) {
        self.conns[i].connected();
        self.became_free(i, now);
    }

    pub(crate) fn connect_failed(&mut self, i: usize, error: &io::Error, now: u64) {
        let kind = if os::is_fd_exhaustion(error) {
            ErrorKind::FdExhausted
        } else {
            ErrorKind::Connect
        };
        self.core.error_without_request(kind, now);
        self.io.closing(i, &mut self.conns[i]);
        self.conns[i].close_with_backoff(now);
    }

    /// A connection can take a request: send one now, or (open loop) list it as idle.
    fn became_free(&mut self, i: usize, now: u64) {
        match self.core.next_request(now) {
            Some(request) => self.send(i, request),
            None if self.core.open_loop() && !self.listed[i] => {
                self.listed[i] = true;
                self.idle.push(i);
            }
            None => {}
        }
    }

    /// Open loop: hands every due request to an idle connection.
    pub(crate) fn dispatch_due(&mut self, now: u64) {
        while let Some(&i) = self.idle.last() {
            if self.conns[i].phase != Phase::Idle {
                self.idle.pop();
                self.listed[i] = false;
                continue;
            }
            let Some(request) = self.core.next_request(now) else {
                break;
            };
            self.idle.pop();
            self.listed[i] = false;
            self.send(i, request);
        }
    }

    fn send(&mut self, i: usize, request: InFlight) {
        let conn = &mut self.conns[i];
        conn.request = request;
        conn.written = 0;
        conn.phase = Phase::Writing;
        self.writable(i, request.sent_ns);
    }

    /// Writes what is left of the request.
    pub(crate) fn writable(&mut self, i: usize, now: u64) {
        let shared = self.shared;
        let conn = &mut self.conns[i];
        if conn.phase != Phase::Writing {
            return;
        }
        match self.io.write(i, conn, &shared.request[conn.written..]) {
            // A partial write waits for the backend to report writability.
            Write::Wrote(n) => _ = self.account_written(i, n),
            Write::Failed => self.request_failed(i, ErrorKind::Write, now),
        }
    }

    /// A write the backend reported as done failed after all.
    pub(crate) fn write_failed(&mut self, i: usize, now: u64) {
        self.request_failed(i, ErrorKind::Write, now);
    }

    /// Counts written bytes; returns whether the whole request is out.
    fn account_written(&mut self, i: usize, n: usize) -> bool {
        let conn = &mut self.conns[i];
        conn.written += n;
        self.core.recorder.wrote_bytes(n);
        let complete = conn.written >= self.shared.request.len();
        if complete {
            conn.phase = Phase::Reading;
        }
        complete
    }

    /// Frames received bytes; returns whether the connection is still open.
    pub(crate) fn bytes(&mut self, i: usize, bytes: &[u8], now: u64) -> bool {
        self.core.recorder.read_bytes(bytes.len(), now);
        let conn = &mut self.conns[i];
        if !conn.busy() {
            // Bytes nobody asked for: the server is not speaking HTTP/1.1 with us.
            self.core.error_without_request(ErrorKind::Malformed, now);
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
                self.core.response(status, conn.request, now);
                if consumed < bytes.len() {
                    // More than the one response asked for: bytes nobody asked for.
                    self.core.error_without_request(ErrorKind::Malformed, now);
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

    /// The server closed the connection.
    pub(crate) fn eof(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        if let Some(status) = conn.framer.finish_at_eof() {
            self.core.response(status, conn.request, now);
            return self.reopen(i, now);
        }
        if conn.busy() {
            self.request_failed(i, ErrorKind::Read, now);
        } else {
            self.reopen(i, now); // an idle keep-alive connection closed by the server
        }
    }

    /// Reading failed (reset).
    pub(crate) fn read_failed(&mut self, i: usize, now: u64) {
        if self.conns[i].busy() {
            self.request_failed(i, ErrorKind::Read, now);
        } else {
            self.reopen(i, now);
        }
    }

    fn request_failed(&mut self, i: usize, kind: ErrorKind, now: u64) {
        let request = self.conns[i].request;
        self.core.request_failed(kind, request, now);
        self.reopen(i, now);
    }

    fn reopen(&mut self, i: usize, now: u64) {
        self.io.closing(i, &mut self.conns[i]);
        self.conns[i].close(now);
        self.open(i, now);
    }

    /// Times out slow requests and connects, and reopens closed connections.
    pub(crate) fn sweep(&mut self, now: u64) {
        let timeout = self.shared.timeout_ns;
        for i in 0..self.conns.len() {
            let conn = &self.conns[i];
            match conn.phase {
                Phase::Closed if conn.retry_at_ns <= now => self.open(i, now),
                Phase::Connecting if now.saturating_sub(conn.started_ns) > timeout => {
                    self.connect_failed(i, &io::Error::from(io::ErrorKind::TimedOut), now);
                }
                Phase::Writing | Phase::Reading
                    if now.saturating_sub(conn.request.sent_ns) > timeout =>
                {
                    self.request_failed(i, ErrorKind::Timeout, now);
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
