//! One generator connection: its socket, where it stands, and its requests in flight.

use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Protocol, Socket, Type};

use crate::clock::NS_PER_MS;
use crate::core::InFlight;
use crate::h2::{H2Conn, Http2Options};
use crate::response::ResponseFramer;
use crate::session::Session;

/// Where a connection stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No socket; reopened once `retry_at_ns` has passed.
    Closed,
    /// A non-blocking connect is under way.
    Connecting,
    /// Connected; the TLS handshake is under way.
    Handshaking,
    /// Connected, no request in flight.
    Idle,
    /// Requests are partly written (responses to earlier ones may arrive).
    Writing,
    /// Every request is written; waiting for (the rest of) the responses.
    Reading,
}

#[derive(Debug)]
pub(crate) struct Conn {
    pub(crate) socket: Option<Socket>,
    /// Bumped on every reopen, so events of an old socket are recognised.
    pub(crate) generation: u32,
    pub(crate) phase: Phase,
    /// Between the socket and the framing: nothing, or TLS.
    pub(crate) session: Session,
    pub(crate) framer: ResponseFramer,
    /// HTTP/2: the connection's streams and windows (framing instead of `framer`).
    pub(crate) h2: Option<Box<H2Conn>>,
    /// The requests in flight, oldest first: responses come back in this order.
    pub(crate) in_flight: InFlightRing,
    /// Bytes of the current write done so far.
    pub(crate) written: usize,
    /// Bytes of the current write in all (some copies of the request).
    pub(crate) write_end: usize,
    /// When the connect (or the request) started, for timeouts.
    pub(crate) started_ns: u64,
    /// When the TCP connection was established (the TLS handshake's start).
    pub(crate) connected_ns: u64,
    pub(crate) retry_at_ns: u64,
    backoff_ns: u64,
}

const FIRST_BACKOFF_NS: u64 = NS_PER_MS;
const MAX_BACKOFF_NS: u64 = 100 * NS_PER_MS;

impl Conn {
    pub(crate) fn new(
        head_request: bool,
        pipeline: u32,
        tls: bool,
        http2: Option<(Http2Options, u32)>,
    ) -> Self {
        Self {
            socket: None,
            generation: 0,
            phase: Phase::Closed,
            session: Session::new(tls),
            framer: ResponseFramer::new(head_request),
            h2: http2.map(|(options, background)| {
                Box::new(H2Conn::with_background(options, background))
            }),
            in_flight: InFlightRing::new(pipeline),
            written: 0,
            write_end: 0,
            started_ns: 0,
            connected_ns: 0,
            retry_at_ns: 0,
            backoff_ns: FIRST_BACKOFF_NS,
        }
    }

    /// Established and not closed.
    pub(crate) fn is_open(&self) -> bool {
        matches!(self.phase, Phase::Idle | Phase::Writing | Phase::Reading)
    }

    /// Drops the socket and forgets its requests (the caller has given
    /// them their outcomes); the connection reopens at `retry_at_ns`.
    pub(crate) fn close(&mut self, retry_at_ns: u64) {
        self.socket = None;
        self.phase = Phase::Closed;
        self.session.reset();
        self.framer.reset();
        if let Some(h2) = self.h2.as_mut() {
            h2.reset();
        }
        self.in_flight.clear();
        self.written = 0;
        self.write_end = 0;
        self.retry_at_ns = retry_at_ns;
    }

    /// Closes after a failed connect, backing off exponentially so a dead
    /// server does not turn the generator into a busy loop.
    pub(crate) fn close_with_backoff(&mut self, now_ns: u64) {
        self.close(now_ns.saturating_add(self.backoff_ns));
        self.backoff_ns = self.backoff_ns.saturating_mul(2).min(MAX_BACKOFF_NS);
    }

    pub(crate) fn connected(&mut self) {
        self.phase = Phase::Idle;
        self.backoff_ns = FIRST_BACKOFF_NS;
    }

    /// HTTP/2, connected (and past any TLS handshake): streams can run.
    #[inline]
    pub(crate) fn h2_ready(&self) -> bool {
        self.h2.is_some() && matches!(self.phase, Phase::Idle | Phase::Writing | Phase::Reading)
    }

    /// Whether a write started on the socket is not finished yet.
    #[inline]
    pub(crate) fn writing(&self) -> bool {
        self.written < self.write_end
    }

    /// The token events of this connection's current socket carry.
    #[inline]
    pub(crate) fn token(&self, index: usize) -> u64 {
        (u64::from(self.generation) << 32) | index as u64
    }
}

/// The send records of a connection's requests in flight, oldest first: a
/// fixed ring of the pipeline depth, allocated with the connection, so that
/// sending and answering requests never allocates.
#[derive(Debug)]
pub(crate) struct InFlightRing {
    slots: Box<[InFlight]>,
    /// Index of the oldest request.
    head: usize,
    len: usize,
}

impl InFlightRing {
    fn new(depth: u32) -> Self {
        let depth = usize::try_from(depth).unwrap_or(1).max(1);
        Self {
            slots: vec![InFlight::default(); depth].into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Requests it can hold: the pipeline depth.
    #[inline]
    pub(crate) fn depth(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.len == self.slots.len()
    }

    /// The oldest request, whose response comes next.
    #[inline]
    pub(crate) fn oldest(&self) -> Option<&InFlight> {
        (self.len > 0).then(|| &self.slots[self.head])
    }

    /// Adds the newest request; returns `false` (and drops it) when full.
    #[inline]
    pub(crate) fn push(&mut self, request: InFlight) -> bool {
        if self.is_full() {
            return false;
        }
        let at = self.wrap(self.head + self.len);
        self.slots[at] = request;
        self.len += 1;
        true
    }

    /// The kernel sent the latest write at `at` (a send stamp): requests
    /// in flight whose clock read came before it count from `at`, and in a
    /// `closed` loop their intended time with them. A stamp older than a
    /// request's own clock read is an earlier write's and changes nothing.
    pub(crate) fn sent_at(&mut self, at: u64, closed: bool) {
        for request in self.iter_mut() {
            if request.sent_ns <= at {
                if closed {
                    request.intended_ns = at;
                }
                request.sent_ns = at;
            }
        }
    }

    /// Every request in flight, oldest first.
    fn iter_mut(&mut self) -> impl Iterator<Item = &mut InFlight> {
        let (head, len, depth) = (self.head, self.len, self.slots.len());
        let (wrapped, first) = self.slots.split_at_mut(head);
        let from_head = first.iter_mut().take(len);
        let after_wrap = wrapped.iter_mut().take((head + len).saturating_sub(depth));
        from_head.chain(after_wrap)
    }

    /// Takes the oldest request.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<InFlight> {
        let oldest = *self.oldest()?;
        self.head = self.wrap(self.head + 1);
        self.len -= 1;
        Some(oldest)
    }

    /// `index` (below twice the depth) as a slot index; no division on the hot path.
    #[inline]
    fn wrap(&self, index: usize) -> usize {
        if index >= self.slots.len() {
            index - self.slots.len()
        } else {
            index
        }
    }

    fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }
}

/// Splits an event token into (connection index, generation).
#[inline]
pub(crate) fn split_token(token: u64) -> (usize, u32) {
    ((token & 0xffff_ffff) as usize, (token >> 32) as u32)
}

/// A TCP socket configured for a generator connection.
pub(crate) fn new_socket(addr: SocketAddr, nonblocking: bool) -> io::Result<Socket> {
    let kind = if nonblocking {
        Type::STREAM.nonblocking()
    } else {
        Type::STREAM
    };
    let socket = Socket::new(
        Domain::for_address(addr),
        kind.cloexec(),
        Some(Protocol::TCP),
    )?;
    socket.set_tcp_nodelay(true)?;
    // Requests are far smaller than any congestion window, so the generator's
    // own congestion control only costs CPU (BBR's model update runs on every
    // ACK). Reno is built into every kernel; where it is refused, keep the default.
    let _ = socket.set_tcp_congestion(b"reno");
    Ok(socket)
}

/// A non-blocking TCP socket with its connect started.
pub(crate) fn start_connect(addr: SocketAddr) -> io::Result<Socket> {
    let socket = new_socket(addr, true)?;
    match socket.connect(&addr.into()) {
        Ok(()) => Ok(socket),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(socket),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent_at(sent_ns: u64) -> InFlight {
        InFlight {
            intended_ns: sent_ns,
            sent_ns,
            in_window: true,
        }
    }

    #[test]
    fn the_ring_hands_requests_back_in_order_around_its_end() {
        let mut ring = InFlightRing::new(3);
        for round in 0..4u64 {
            assert!(ring.push(sent_at(round * 10)));
            assert!(ring.push(sent_at(round * 10 + 1)));
            assert_eq!(ring.pop().map(|r| r.sent_ns), Some(round * 10));
            assert_eq!(ring.oldest().map(|r| r.sent_ns), Some(round * 10 + 1));
            assert_eq!(ring.pop().map(|r| r.sent_ns), Some(round * 10 + 1));
            assert!(ring.is_empty());
        }
        assert!(ring.push(sent_at(1)) && ring.push(sent_at(2)) && ring.push(sent_at(3)));
        assert!(ring.is_full() && !ring.push(sent_at(4)));
        assert_eq!(ring.len(), 3);
        ring.clear();
        assert_eq!(ring.pop(), None);
    }

    #[test]
    fn a_send_stamp_moves_only_the_requests_it_can_belong_to() {
        let mut ring = InFlightRing::new(4);
        let paced = InFlight {
            intended_ns: 50,
            sent_ns: 100,
            in_window: true,
        };
        assert!(ring.push(paced) && ring.push(sent_at(300)));
        // An open loop keeps its schedule; the stamp is older than the
        // second request's clock read, so it is an earlier write's.
        ring.sent_at(120, false);
        let open: Vec<(u64, u64)> = ring
            .iter_mut()
            .map(|r| (r.intended_ns, r.sent_ns))
            .collect();
        assert_eq!(open, vec![(50, 120), (300, 300)]);
        ring.clear();
        assert!(ring.push(sent_at(100)));
        ring.sent_at(130, true);
        assert_eq!(
            ring.pop().map(|r| (r.intended_ns, r.sent_ns)),
            Some((130, 130))
        );
    }

    #[test]
    fn every_request_in_flight_is_visited_oldest_first_around_the_end() {
        let mut ring = InFlightRing::new(3);
        assert!(ring.push(sent_at(1)) && ring.push(sent_at(2)));
        ring.pop();
        assert!(ring.push(sent_at(3)) && ring.push(sent_at(4)));
        // Slots now hold [4, 2, 3] with the oldest at index 1.
        let seen: Vec<u64> = ring.iter_mut().map(|r| r.sent_ns).collect();
        assert_eq!(seen, vec![2, 3, 4]);
        for request in ring.iter_mut() {
            request.sent_ns += 100;
        }
        assert_eq!(ring.pop().map(|r| r.sent_ns), Some(102));
        assert_eq!(ring.iter_mut().count(), 2);
        ring.clear();
        assert_eq!(ring.iter_mut().count(), 0);
    }
}
