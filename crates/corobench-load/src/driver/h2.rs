//! What the driver does for an HTTP/2 connection: send the preface once the
//! connection (and its TLS session) is up, open streams as the schedule
//! hands out requests (up to the streams each connection may keep open),
//! feed the plaintext read to the connection's state machine, record the
//! streams' outcomes, write the frames it owes in one write per read, and
//! close it with GOAWAY on a protocol error or reconnect after the server's.

use super::{Driver, Io};
use crate::conn::Phase;
use crate::core::InFlight;
use crate::h2::{ConnError, Event, StreamEnd};
use crate::recorder::ErrorKind;
use crate::session::Session;

impl StreamEnd {
    fn kind(self) -> ErrorKind {
        match self {
            Self::Reset => ErrorKind::RstStream,
            Self::Refused => ErrorKind::RefusedStream,
            Self::Stalled => ErrorKind::FlowControlStall,
            Self::Timeout => ErrorKind::Timeout,
            Self::Malformed => ErrorKind::Malformed,
            Self::Connection => ErrorKind::Protocol,
        }
    }
}

impl<I: Io> Driver<'_, I> {
    /// The connection is up: the preface goes out, with the stream of the
    /// request that opened the connection (a connection per request), or
    /// with the streams the schedule has for it.
    pub(super) fn h2_established(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        conn.connected();
        if !self.shared.prime {
            self.ready.mark(i);
        }
        let Some(h2) = conn.h2.as_mut() else {
            return;
        };
        h2.start();
        if let Some(request) = conn.in_flight.pop() {
            self.h2_open(i, request, now);
        }
        self.h2_fill(i, now);
    }

    /// Opens a stream for `request` on connection `i` (which has room).
    fn h2_open(&mut self, i: usize, request: InFlight, now: u64) {
        let Some(setup) = self.shared.h2.as_ref() else {
            return;
        };
        let Some(h2) = self.conns[i].h2.as_mut() else {
            return;
        };
        if h2.open_stream(request, &setup.request) {
            let on_connection = h2.open();
            if let Some(streams) = self.core.recorder.streams.as_mut() {
                streams.opened(now, on_connection);
            }
        } else {
            // Never happens (callers check the room); the request must not vanish.
            self.core
                .request_failed(ErrorKind::RefusedStream, request, now);
        }
    }

    /// Keeps the connection's background streams open (HTTP/2 with a
    /// background request, connections kept alive, until the window closes).
    fn h2_fill_background(&mut self, i: usize, now: u64) {
        let Some(background) = self.shared.h2.as_ref().and_then(|s| s.background.as_ref()) else {
            return;
        };
        if !self.shared.keepalive || self.core.window_closed() || !self.conns[i].h2_ready() {
            return;
        }
        let Some(h2) = self.conns[i].h2.as_mut() else {
            return;
        };
        let in_window = self.core.recorder.measuring();
        while h2.background_room() > 0 {
            let request = InFlight {
                intended_ns: now,
                sent_ns: now,
                in_window,
            };
            if !h2.open_background(request, &background.request) {
                break;
            }
        }
    }

    /// Streams the connection may still open right now.
    pub(super) fn h2_room(&self, i: usize) -> u32 {
        let conn = &self.conns[i];
        match conn.h2.as_ref() {
            Some(h2) if conn.h2_ready() => h2.room(),
            _ => 0,
        }
    }

    /// Fills a ready connection with streams the schedule hands out (a
    /// priming request first, when asked), lists it as idle if room is
    /// left (open loop), and writes what it owes.
    pub(super) fn h2_fill(&mut self, i: usize, now: u64) {
        if !self.conns[i].h2_ready() {
            return;
        }
        self.h2_fill_background(i, now);
        let nothing_open = self.conns[i].h2.as_ref().is_some_and(|h2| h2.open() == 0);
        if nothing_open && self.wants_priming(i) {
            let request = self.core.priming_request(now);
            self.h2_open(i, request, now);
        } else if self.shared.keepalive && self.h2_refill_due(i) {
            while self.h2_room(i) > 0 {
                let Some(request) = self.core.next_request(now) else {
                    break;
                };
                self.h2_open(i, request, now);
            }
            if self.h2_room(i) > 0 {
                self.list_idle(i);
            }
        }
        self.h2_flush(i, now);
    }

    /// Whether the connection takes new streams now. The open loop sends
    /// each request when it is due. The closed loop waits until an eighth
    /// of the connection's streams are free ([`H2Conn::refill_due`]).
    ///
    /// [`H2Conn::refill_due`]: crate::h2::H2Conn::refill_due
    fn h2_refill_due(&self, i: usize) -> bool {
        self.core.open_loop() || self.conns[i].h2.as_ref().is_none_or(|h2| h2.refill_due())
    }

    /// Open loop: a due request for a connection with room.
    pub(super) fn h2_dispatch(&mut self, i: usize, request: InFlight, now: u64) {
        self.h2_open(i, request, now);
        self.h2_flush(i, now);
    }

    /// Writes the frames the connection owes, unless a write is under way
    /// (they follow it) or the connection is not up yet.
    pub(super) fn h2_flush(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        if conn.writing() || !conn.h2_ready() {
            return;
        }
        let Some(h2) = conn.h2.as_mut() else {
            return;
        };
        if !h2.has_pending() {
            return;
        }
        conn.written = 0;
        match &mut conn.session {
            Session::Tls(tls) if tls.encrypts() => {
                let sealed = tls.seal(h2.pending());
                h2.sealed();
                if sealed.is_err() {
                    return self.abandon(i, ErrorKind::Write, now);
                }
                conn.write_end = tls.outgoing().len();
            }
            _ => conn.write_end = h2.begin_write(),
        }
        conn.phase = Phase::Writing;
        self.writable(i, now);
    }

    /// Plaintext from the server: frames are taken, outcomes recorded (at
    /// `received`), new streams opened and the frames owed written. Returns
    /// whether the connection is still open.
    pub(super) fn h2_frame(&mut self, i: usize, bytes: &[u8], received: u64, now: u64) -> bool {
        let (Some(setup), Some(h2)) = (self.shared.h2.as_ref(), self.conns[i].h2.as_mut()) else {
            return false;
        };
        let outcome = h2.receive(bytes, &setup.request);
        self.h2_events(i, received, now);
        if let Err(error) = outcome {
            self.h2_broken(i, error, now);
            return false;
        }
        self.h2_after_streams(i, now)
    }

    /// After streams ended: a connection per request, or one the server
    /// sent GOAWAY on, closes once nothing is open on it (and reconnects);
    /// otherwise it takes new streams. Returns whether it is still open.
    fn h2_after_streams(&mut self, i: usize, now: u64) -> bool {
        let Some(h2) = self.conns[i].h2.as_ref() else {
            return false;
        };
        let done = h2.open() == 0 && (h2.retiring() || !self.shared.keepalive);
        if done {
            self.reopen(i, now);
            return false;
        }
        self.h2_fill(i, now);
        true
    }

    /// Records the streams' outcomes and the connection's events.
    pub(super) fn h2_events(&mut self, i: usize, received: u64, now: u64) {
        let Some(h2) = self.conns[i].h2.as_mut() else {
            return;
        };
        let mut events = h2.take_events();
        for event in events.drain(..) {
            match event {
                Event::Response { request, status } => {
                    self.ready.mark(i);
                    self.core.response(status, request, received);
                    if received < now {
                        self.core.recorder.read_late(now - received);
                    }
                }
                Event::Failed { request, end } => {
                    self.ready.mark(i);
                    self.core.request_failed(end.kind(), request, now);
                }
                Event::Limit(limit) => {
                    if let Some(streams) = self.core.recorder.streams.as_mut() {
                        streams.server_limit(limit);
                    }
                }
                Event::GoAway => {
                    if let Some(streams) = self.core.recorder.streams.as_mut() {
                        streams.goaway();
                    }
                }
                Event::Background { request, outcome } => {
                    self.h2_background_done(request, outcome, received)
                }
            }
            if matches!(event, Event::Response { .. } | Event::Failed { .. }) {
                if let Some(streams) = self.core.recorder.streams.as_mut() {
                    streams.closed(now);
                }
            }
        }
        if let Some(h2) = self.conns[i].h2.as_mut() {
            h2.give_back(events);
        }
    }

    /// A background stream ended: counted apart from the measured load.
    fn h2_background_done(&mut self, request: InFlight, outcome: Result<u16, StreamEnd>, at: u64) {
        if let Some(streams) = self.core.recorder.streams.as_mut() {
            let answered = outcome.is_ok_and(|status| status < 400);
            streams.background_done(request, answered, at);
        }
    }

    /// A connection error: GOAWAY goes out (if the socket takes it now),
    /// every stream on it fails as a protocol error (or the connection
    /// counts once), and it reconnects.
    fn h2_broken(&mut self, i: usize, error: ConnError, now: u64) {
        match error {
            ConnError::Http1Answer => {
                if let Some(streams) = self.core.recorder.streams.as_mut() {
                    streams.http1_answer();
                }
            }
            ConnError::TlsAnswer => self.core.recorder.tls_answer(),
            ConnError::Protocol { .. } => {}
        }
        let conn = &mut self.conns[i];
        if let Some(h2) = conn.h2.as_mut() {
            h2.goaway(error);
            let open = h2.open();
            h2.fail_all(StreamEnd::Connection);
            if open == 0 {
                self.core.error_without_request(ErrorKind::Protocol, now);
            }
        }
        self.h2_events(i, now, now);
        self.h2_flush(i, now);
        self.reopen(i, now);
    }

    /// Cancels the connection's streams that timed out, and writes the resets.
    pub(super) fn h2_sweep(&mut self, i: usize, now: u64) {
        let body_len = self.shared.h2.as_ref().map_or(0, |s| s.request.body.len());
        let timeout = self.shared.timeout_ns;
        let Some(h2) = self.conns[i].h2.as_mut() else {
            return;
        };
        if h2
            .oldest_sent_ns()
            .is_none_or(|at| now.saturating_sub(at) <= timeout)
        {
            return;
        }
        h2.expire(now, timeout, body_len);
        self.h2_events(i, now, now);
        self.h2_after_streams(i, now);
    }

    /// Every stream on the connection fails as `kind` (it is lost, or the
    /// drain gave up on it).
    pub(super) fn h2_fail_all(&mut self, i: usize, kind: ErrorKind, now: u64) {
        let Some(h2) = self.conns[i].h2.as_mut() else {
            return;
        };
        if h2.open_with_background() == 0 {
            return;
        }
        let end = if kind == ErrorKind::Timeout {
            StreamEnd::Timeout
        } else {
            StreamEnd::Connection
        };
        h2.fail_all(end);
        self.h2_events_as(i, kind, now);
    }

    /// Records the streams just failed as `kind` (a lost connection: the
    /// transport's own error kind, not a protocol error).
    fn h2_events_as(&mut self, i: usize, kind: ErrorKind, now: u64) {
        let Some(h2) = self.conns[i].h2.as_mut() else {
            return;
        };
        let mut events = h2.take_events();
        for event in events.drain(..) {
            match event {
                Event::Failed { request, .. } => {
                    self.ready.mark(i);
                    self.core.request_failed(kind, request, now);
                    if let Some(streams) = self.core.recorder.streams.as_mut() {
                        streams.closed(now);
                    }
                }
                Event::Background { request, outcome } => {
                    self.h2_background_done(request, outcome, now);
                }
                _ => {}
            }
        }
        if let Some(h2) = self.conns[i].h2.as_mut() {
            h2.give_back(events);
        }
    }
}
