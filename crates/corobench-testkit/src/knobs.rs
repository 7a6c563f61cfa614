//! The behaviours a [`TestServer`](crate::TestServer) can be told to show.
//!
//! Every knob works alone; combine them with struct update syntax:
//!
//! ```
//! use std::time::Duration;
//! use corobench_testkit::Knobs;
//!
//! let knobs = Knobs { response_delay: Duration::from_millis(50), status: 500, ..Knobs::default() };
//! assert_eq!(knobs.body_bytes, None);
//! ```

use std::time::Duration;

use crate::tls::TlsKnobs;

/// How the test server answers. The default answers every request at once
/// with `200 OK` and the 13-byte body `Hello, World!`, keeping connections
/// alive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knobs {
    /// Each response is sent this long after its request was read
    /// (pipelined requests each wait their own delay, answered in order).
    pub response_delay: Duration,
    /// A stall that begins a fixed time after the server starts: during it
    /// no response is sent; when it ends every response owed is sent at once.
    /// [`TestServer::stall_for`](crate::TestServer::stall_for) starts one on demand.
    pub stall: Option<Stall>,
    /// Close each connection once this many responses were sent on it (the
    /// last one carries `Connection: close`; requests after it are dropped).
    pub close_after_requests: Option<u64>,
    /// Close every connection as soon as it is accepted, without reading or
    /// answering anything.
    pub close_on_accept: bool,
    /// Send bodies with `Transfer-Encoding: chunked`: three chunks, the
    /// first two with chunk extensions, and a trailer field after the last.
    pub chunked: bool,
    /// Answer every request with bytes that are not HTTP, then close.
    pub garbage: bool,
    /// Declare a `Content-Length` larger than the body sent, then close.
    pub truncate: bool,
    /// The status code of every response (its standard reason phrase follows).
    pub status: u16,
    /// Read requests slowly: a few bytes at a time with pauses between reads.
    pub slow_read: Option<SlowRead>,
    /// Accept the first connections slowly, as a server that starts a
    /// worker for each new connection does (the kernel completes their
    /// handshakes at once; their requests wait until they are accepted).
    pub slow_accept: Option<SlowAccept>,
    /// The body length of every response; `None` means `Hello, World!`.
    /// A sized body repeats the lower-case alphabet.
    pub body_bytes: Option<usize>,
    /// Serve HTTPS (with a fresh test CA), behaving as these knobs say.
    pub tls: Option<TlsKnobs>,
}

impl Default for Knobs {
    fn default() -> Self {
        Self {
            response_delay: Duration::ZERO,
            stall: None,
            close_after_requests: None,
            close_on_accept: false,
            chunked: false,
            garbage: false,
            truncate: false,
            status: 200,
            slow_read: None,
            slow_accept: None,
            body_bytes: None,
            tls: None,
        }
    }
}

/// A window during which the server answers nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    /// When the stall begins, counted from the server's start.
    pub after: Duration,
    /// How long it lasts.
    pub length: Duration,
}

/// How slowly the server accepts its first connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlowAccept {
    /// How many connections are accepted slowly; later ones at once.
    pub connections: u32,
    /// The pause before accepting each of them.
    pub pause: Duration,
}

/// How slowly the server reads requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlowRead {
    /// Bytes taken from the socket per read (at least 1).
    pub bytes_per_read: usize,
    /// The pause between two reads.
    pub pause: Duration,
    /// `SO_RCVBUF` of accepted sockets, so the client's writes back up
    /// quickly; `None` keeps the kernel's default.
    pub receive_buffer_bytes: Option<usize>,
}

impl Knobs {
    /// The response body these knobs ask for.
    #[must_use]
    pub fn body(&self) -> Vec<u8> {
        match self.body_bytes {
            None => b"Hello, World!".to_vec(),
            Some(len) => (b'a'..=b'z').cycle().take(len).collect(),
        }
    }
}
