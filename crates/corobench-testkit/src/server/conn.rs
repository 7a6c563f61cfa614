//! One connection of the knob server: bytes in, requests parsed, responses
//! owed with the time each may leave, bytes out.

use std::collections::VecDeque;
use std::io;
use std::net::Shutdown;
use std::time::{Duration, Instant};

use mio::net::TcpStream;

use super::Context;
use super::wire::Wire;
use crate::http::{Parsed, parse_request};

/// A request head may not grow beyond this before it is complete.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// How long a closing connection keeps reading what the client still sends,
/// so that closing does not reset the connection under the last response.
const LINGER: Duration = Duration::from_secs(2);

/// What the event loop must do with a connection after serving it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Keep it; wake it at this time even without readiness.
    Open(Option<Instant>),
    Close,
}

#[derive(Debug)]
pub(crate) struct Conn {
    pub stream: TcpStream,
    /// Plaintext or TLS on the socket.
    wire: Wire,
    /// Tells this connection apart from an earlier one in the same slot.
    pub generation: u64,
    /// The wake-up already scheduled, if any.
    pub timer_at: Option<Instant>,
    inbound: Vec<u8>,
    outbound: Vec<u8>,
    sent: usize,
    /// When each owed response may be sent, in request order.
    owed: VecDeque<Instant>,
    requests: u64,
    /// Request body bytes still to discard.
    body_left: u64,
    /// A head was read and its body is still arriving; whether it asked
    /// for `Connection: close`.
    awaiting_body: Option<bool>,
    read_paused_until: Option<Instant>,
    peer_closed: bool,
    /// No more requests are taken (limit reached, `Connection: close`).
    no_more_requests: bool,
    close_when_flushed: bool,
    /// Our side is shut down; we read until EOF or this deadline.
    lingering_until: Option<Instant>,
}

impl Conn {
    pub fn new(stream: TcpStream, wire: Wire, generation: u64) -> Self {
        Self {
            stream,
            wire,
            generation,
            timer_at: None,
            inbound: Vec::new(),
            outbound: Vec::new(),
            sent: 0,
            owed: VecDeque::new(),
            requests: 0,
            body_left: 0,
            awaiting_body: None,
            read_paused_until: None,
            peer_closed: false,
            no_more_requests: false,
            close_when_flushed: false,
            lingering_until: None,
        }
    }

    /// Reads, parses, answers what is due and writes, as far as the socket allows.
    pub fn serve(&mut self, ctx: &Context, now: Instant) -> Next {
        if self.read(ctx, now).is_err() || self.parse(ctx, now).is_err() {
            return Next::Close;
        }
        self.answer_due(ctx, now);
        if self.write().is_err() {
            return Next::Close;
        }
        self.next_step(ctx, now)
    }

    fn read(&mut self, ctx: &Context, now: Instant) -> io::Result<()> {
        if self.peer_closed || self.read_paused_until.is_some_and(|until| now < until) {
            return Ok(());
        }
        self.read_paused_until = None;
        let slow = ctx.knobs.slow_read;
        let mut chunk = [0u8; 16 * 1024];
        let want = slow.map_or(chunk.len(), |s| s.bytes_per_read.clamp(1, chunk.len()));
        loop {
            match self.wire.read(&mut self.stream, &mut chunk[..want]) {
                Ok(0) => {
                    self.peer_closed = true;
                    return Ok(());
                }
                Ok(n) => {
                    if self.lingering_until.is_none() && !self.no_more_requests {
                        self.inbound.extend_from_slice(&chunk[..n]);
                    }
                    if let Some(slow) = slow {
                        self.read_paused_until = Some(now + slow.pause);
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Takes every complete request (head and body) out of the inbound bytes.
    fn parse(&mut self, ctx: &Context, now: Instant) -> Result<(), ()> {
        loop {
            let skip = usize::try_from(self.body_left)
                .unwrap_or(usize::MAX)
                .min(self.inbound.len());
            self.inbound.drain(..skip);
            self.body_left -= skip as u64;
            if self.body_left > 0 {
                return Ok(());
            }
            if let Some(connection_close) = self.awaiting_body.take() {
                self.complete_request(ctx, now, connection_close);
            }
            if self.no_more_requests {
                return Ok(());
            }
            let head = match parse_request(&self.inbound) {
                Parsed::Complete(head) if !head.chunked => head,
                Parsed::Partial if self.inbound.len() <= MAX_HEAD_BYTES => return Ok(()),
                _ => return Err(()),
            };
            ctx.counters.saw_target(&head.target);
            self.inbound.drain(..head.head_bytes);
            self.body_left = head.content_length;
            self.awaiting_body = Some(head.connection_close);
        }
    }

    /// A whole request arrived: a response is owed after the delay.
    fn complete_request(&mut self, ctx: &Context, now: Instant, connection_close: bool) {
        self.requests += 1;
        ctx.counters.count_request();
        self.owed.push_back(now + ctx.knobs.response_delay);
        let limit_reached = ctx.knobs.close_after_requests == Some(self.requests);
        if connection_close || limit_reached {
            self.no_more_requests = true;
            self.inbound.clear();
        }
    }

    fn answer_due(&mut self, ctx: &Context, now: Instant) {
        if self.close_when_flushed || ctx.stalls.held_until(now).is_some() {
            return;
        }
        while self.owed.front().is_some_and(|due| *due <= now) {
            self.owed.pop_front();
            let last =
                ctx.responses.close_after_each || (self.no_more_requests && self.owed.is_empty());
            let bytes = if last {
                &ctx.responses.closing
            } else {
                &ctx.responses.ordinary
            };
            self.outbound.extend_from_slice(bytes);
            ctx.counters.count_response();
            if last {
                self.close_when_flushed = true;
                self.owed.clear();
                return;
            }
        }
    }

    fn write(&mut self) -> io::Result<()> {
        while self.sent < self.outbound.len() {
            match self
                .wire
                .write(&mut self.stream, &self.outbound[self.sent..])
            {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.outbound.clear();
        self.sent = 0;
        self.wire.flush(&mut self.stream)
    }

    fn next_step(&mut self, ctx: &Context, now: Instant) -> Next {
        let flushed = self.outbound.is_empty() && !self.wire.pending();
        if let Some(until) = self.lingering_until {
            return if self.peer_closed || now >= until {
                Next::Close
            } else {
                Next::Open(Some(until))
            };
        }
        if flushed && self.close_when_flushed {
            // Half-close so the response is delivered, then drain until EOF.
            self.wire.close(&mut self.stream);
            let _ = self.stream.shutdown(Shutdown::Write);
            self.lingering_until = Some(now + LINGER);
            return self.next_step(ctx, now);
        }
        if flushed && self.peer_closed && self.owed.is_empty() {
            return Next::Close;
        }
        let due = self
            .owed
            .front()
            .map(|due| ctx.stalls.held_until(now).unwrap_or(*due).max(*due));
        Next::Open(earliest(due, self.read_paused_until))
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
