//! What a knob-server connection speaks on its socket: plaintext, TLS, or
//! one of the hostile TLS behaviours ([`crate::TlsKnobs`]).

use std::io::{self, Read, Write};
use std::sync::Arc;

use mio::net::TcpStream;
use rustls::{ServerConfig, ServerConnection};

/// What a cleartext server answers a TLS greeting with.
const PLAINTEXT_400: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\nConnection: close\r\n\r\nBad Request";

#[derive(Debug)]
pub(crate) enum Wire {
    Plain,
    Tls(Box<ServerConnection>),
    /// Closes as soon as its ClientHello arrives, unanswered.
    DropInHandshake,
    /// Answers whatever arrives with a plaintext `400`, then closes.
    PlaintextAnswer,
}

impl Wire {
    /// A TLS session for a new connection.
    pub(crate) fn tls(config: &Arc<ServerConfig>) -> Self {
        match ServerConnection::new(Arc::clone(config)) {
            Ok(conn) => Self::Tls(Box::new(conn)),
            // Never with a valid configuration; the connection then fails as a hostile one.
            Err(_) => Self::DropInHandshake,
        }
    }

    /// Reads plaintext like `Read::read`: `Ok(0)` when the peer closed,
    /// `WouldBlock` when nothing more is there.
    pub(crate) fn read(&mut self, stream: &mut TcpStream, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Plain => stream.read(buf),
            Self::Tls(tls) => tls_read(tls, stream, buf),
            Self::DropInHandshake => match stream.read(buf)? {
                0 => Ok(0),
                _ => Err(io::ErrorKind::ConnectionAborted.into()),
            },
            Self::PlaintextAnswer => match stream.read(buf)? {
                0 => Ok(0),
                _ => {
                    let _ = stream.write_all(PLAINTEXT_400);
                    Err(io::ErrorKind::ConnectionAborted.into())
                }
            },
        }
    }

    /// Writes plaintext like `Write::write` (over TLS: encrypted and
    /// flushed as far as the socket takes it).
    pub(crate) fn write(&mut self, stream: &mut TcpStream, bytes: &[u8]) -> io::Result<usize> {
        let Self::Tls(tls) = self else {
            return stream.write(bytes);
        };
        let n = tls.writer().write(bytes)?;
        flush(tls, stream)?;
        if n == 0 && !bytes.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }

    /// Writes the records still waiting (a handshake flight, tickets).
    pub(crate) fn flush(&mut self, stream: &mut TcpStream) -> io::Result<()> {
        match self {
            Self::Tls(tls) => flush(tls, stream),
            _ => Ok(()),
        }
    }

    /// Whether records still wait to be written.
    pub(crate) fn pending(&self) -> bool {
        matches!(self, Self::Tls(tls) if tls.wants_write())
    }

    /// Ends the session properly (close_notify) before the socket closes.
    pub(crate) fn close(&mut self, stream: &mut TcpStream) {
        if let Self::Tls(tls) = self {
            tls.send_close_notify();
            let _ = flush(tls, stream);
        }
    }
}

fn tls_read(
    tls: &mut ServerConnection,
    stream: &mut TcpStream,
    buf: &mut [u8],
) -> io::Result<usize> {
    loop {
        match tls.reader().read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        if tls.read_tls(stream)? == 0 {
            return Ok(0);
        }
        if let Err(error) = tls.process_new_packets() {
            // Send the alert rustls queued, so the client learns why.
            let _ = flush(tls, stream);
            return Err(io::Error::new(io::ErrorKind::InvalidData, error));
        }
        flush(tls, stream)?;
    }
}

fn flush(tls: &mut ServerConnection, stream: &mut TcpStream) -> io::Result<()> {
    while tls.wants_write() {
        match tls.write_tls(stream) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
