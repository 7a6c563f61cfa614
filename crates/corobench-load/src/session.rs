//! The layer between a connection's socket and its HTTP framing.
//!
//! A connection is TCP, then a session, then framing:
//!
//! ```text
//! schedule (Driver, Core)      which connection sends when; never sees bytes
//!   framing (ResponseFramer)   HTTP/1.1 requests out, responses framed in
//!     session (Session)        plaintext <-> bytes on the socket
//!       socket (Io backend)    epoll or io_uring
//! ```
//!
//! The session turns the plaintext the framing sends into the bytes the
//! backend writes, and the bytes the backend reads into plaintext for the
//! framing: nothing at all in cleartext, a TLS session over `https://`
//! (whose handshake comes first, and whose keys the kernel may take over).
//! Another framing (HTTP/2) sits on the same session.

use crate::tls::session::TlsSession;

/// A connection's session.
#[derive(Debug)]
pub(crate) enum Session {
    /// Cleartext: bytes go to and come from the socket as they are.
    Plain,
    /// TLS: bytes are records; plaintext waits for the handshake.
    Tls(Box<TlsSession>),
}

impl Session {
    pub(crate) fn new(tls: bool) -> Self {
        if tls {
            Self::Tls(Box::default())
        } else {
            Self::Plain
        }
    }

    /// The socket is gone: forget its session (buffers are kept for the next).
    pub(crate) fn reset(&mut self) {
        if let Self::Tls(tls) = self {
            tls.reset();
        }
    }

    /// Whether written bytes come from the session (TLS records) rather
    /// than straight from the request bytes (cleartext, or kTLS).
    pub(crate) fn encrypts(&self) -> bool {
        matches!(self, Self::Tls(tls) if tls.encrypts())
    }

    /// TLS with user-space decryption: received bytes are records.
    pub(crate) fn decrypts(&self) -> bool {
        self.encrypts()
    }

    /// The kernel holds the TLS keys: reads come with record types.
    pub(crate) fn kernel(&self) -> bool {
        matches!(self, Self::Tls(tls) if !tls.encrypts())
    }
}
