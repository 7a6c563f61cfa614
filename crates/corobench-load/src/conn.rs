//! One generator connection: its socket, where it stands, and its in-flight request.

use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Protocol, Socket, Type};

use crate::clock::NS_PER_MS;
use crate::core::InFlight;
use crate::response::ResponseFramer;

/// Where a connection stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No socket; reopened once `retry_at_ns` has passed.
    Closed,
    /// A non-blocking connect is under way.
    Connecting,
    /// Connected, no request in flight.
    Idle,
    /// A request is partly written.
    Writing,
    /// The request is written; waiting for (the rest of) the response.
    Reading,
}

#[derive(Debug)]
pub(crate) struct Conn {
    pub(crate) socket: Option<Socket>,
    /// Bumped on every reopen, so events of an old socket are recognised.
    pub(crate) generation: u32,
    pub(crate) phase: Phase,
    pub(crate) framer: ResponseFramer,
    /// The request in flight (the last one, when idle).
    pub(crate) request: InFlight,
    /// Bytes of the request written so far.
    pub(crate) written: usize,
    /// When the connect (or the request) started, for timeouts.
    pub(crate) started_ns: u64,
    pub(crate) retry_at_ns: u64,
    backoff_ns: u64,
}

const FIRST_BACKOFF_NS: u64 = NS_PER_MS;
const MAX_BACKOFF_NS: u64 = 100 * NS_PER_MS;

impl Conn {
    pub(crate) fn new(head_request: bool) -> Self {
        Self {
            socket: None,
            generation: 0,
            phase: Phase::Closed,
            framer: ResponseFramer::new(head_request),
            request: InFlight::default(),
            written: 0,
            started_ns: 0,
            retry_at_ns: 0,
            backoff_ns: FIRST_BACKOFF_NS,
        }
    }

    /// Whether a request is in flight on this connection.
    #[inline]
    pub(crate) fn busy(&self) -> bool {
        matches!(self.phase, Phase::Writing | Phase::Reading)
    }

    /// Drops the socket; the connection reopens at `retry_at_ns`.
    pub(crate) fn close(&mut self, retry_at_ns: u64) {
        self.socket = None;
        self.phase = Phase::Closed;
        self.framer.reset();
        self.written = 0;
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

    /// The token events of this connection's current socket carry.
    #[inline]
    pub(crate) fn token(&self, index: usize) -> u64 {
        (u64::from(self.generation) << 32) | index as u64
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
