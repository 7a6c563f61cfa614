//! How the verifier reaches a target: plain TCP, or TLS with rustls
//! (blocking, trusting only the run's authority), for HTTP/1.1 and for the
//! raw HTTP/2 frames of the h2-settings rule.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;

use crate::client::ClientError;

/// What to wrap a new connection in.
#[derive(Clone, Debug)]
pub enum Connector {
    Plain,
    Tls {
        config: Arc<rustls::ClientConfig>,
        name: ServerName<'static>,
    },
}

impl Connector {
    /// A connection to `addr`, the TLS handshake done when there is one.
    ///
    /// # Errors
    /// The connection was refused or timed out, or the handshake failed.
    pub fn connect(&self, addr: SocketAddr, timeout: Duration) -> Result<Stream, ClientError> {
        let tcp = TcpStream::connect_timeout(&addr, timeout)
            .map_err(|source| ClientError::Connect { addr, source })?;
        tcp.set_nodelay(true)?;
        tcp.set_write_timeout(Some(timeout.max(Duration::from_secs(10))))?;
        match self {
            Self::Plain => Ok(Stream::Plain(tcp)),
            Self::Tls { config, name } => {
                let handshake = |source| ClientError::Handshake { addr, source };
                let connection = rustls::ClientConnection::new(Arc::clone(config), name.clone())
                    .map_err(|e| handshake(io::Error::other(e)))?;
                let mut stream = rustls::StreamOwned::new(connection, tcp);
                stream.sock.set_read_timeout(Some(timeout))?;
                while stream.conn.is_handshaking() {
                    stream
                        .conn
                        .complete_io(&mut stream.sock)
                        .map_err(handshake)?;
                }
                Ok(Stream::Tls(Box::new(stream)))
            }
        }
    }
}

/// A connection, over TLS or not.
#[derive(Debug)]
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    /// The TCP socket underneath, for timeouts.
    #[must_use]
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Self::Plain(tcp) => tcp,
            Self::Tls(stream) => &stream.sock,
        }
    }

    /// The TLS session, when there is one.
    #[must_use]
    pub fn tls(&self) -> Option<&rustls::ClientConnection> {
        match self {
            Self::Plain(_) => None,
            Self::Tls(stream) => Some(&stream.conn),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Plain(tcp) => tcp.read(buf),
            Self::Tls(stream) => match stream.read(buf) {
                // A peer that closes without close_notify still ended the
                // response the verifier is reading: that is the framing's
                // business, not an error of the transport.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
                other => other,
            },
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Plain(tcp) => tcp.write(buf),
            Self::Tls(stream) => stream.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Plain(tcp) => tcp.flush(),
            Self::Tls(stream) => stream.flush(),
        }
    }
}
