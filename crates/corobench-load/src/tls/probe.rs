//! One handshake before the load, on the connection that checks the server
//! is up: a certificate the check refuses, a port that speaks plaintext, an
//! ALPN or version the server cannot agree to, a kernel that will not take
//! the keys — each stops the run before it starts, with the reason.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd as _;
use std::sync::Arc;
use std::time::Duration;

use rustls::ClientConnection;

use super::error::from_first_bytes;
use super::ktls;
use super::{HandshakeRefusal, TlsError, TlsSetup};

/// Bytes of the server's first answer kept to tell what it speaks.
const FIRST_BYTES: usize = 16;

/// Does a whole handshake on `stream` (connected to `server`), and with
/// kTLS hands its keys to the kernel.
///
/// # Errors
/// The handshake failed (the refusal says why), or the kernel refused the keys.
pub(crate) fn probe(
    stream: TcpStream,
    setup: &TlsSetup,
    server: &str,
    timeout: Duration,
) -> Result<(), TlsError> {
    let refused = |refusal| TlsError::Handshake {
        server: server.to_owned(),
        refusal,
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let mut conn = ClientConnection::new(Arc::clone(&setup.config), setup.server_name.clone())
        .map_err(|e| TlsError::Rustls(e.to_string()))?;
    let mut wire = Recording {
        stream,
        first: Vec::with_capacity(FIRST_BYTES),
    };
    while conn.is_handshaking() || conn.wants_write() {
        if let Err(error) = conn.complete_io(&mut wire) {
            let refusal = refusal_of(&error, &setup.checked_name, &wire.first, setup);
            return Err(refused(refusal));
        }
    }
    if setup.ktls {
        let version = conn
            .protocol_version()
            .unwrap_or(rustls::ProtocolVersion::TLSv1_3);
        let secrets = conn
            .dangerous_extract_secrets()
            .map_err(|e| TlsError::KtlsRefused(e.to_string()))?;
        let fd = wire.stream.as_raw_fd();
        ktls::enable(fd, version, &secrets.rx, ktls::Direction::Receive)
            .and_then(|()| ktls::enable(fd, version, &secrets.tx, ktls::Direction::Transmit))
            .map_err(TlsError::KtlsRefused)?;
    }
    Ok(())
}

/// Why the handshake failed, from the I/O error rustls's driver returned.
fn refusal_of(error: &io::Error, name: &str, first: &[u8], setup: &TlsSetup) -> HandshakeRefusal {
    if let Some(tls) = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        return match HandshakeRefusal::from_rustls(tls, name, first) {
            HandshakeRefusal::NoAlpn { .. } => HandshakeRefusal::NoAlpn {
                offered: alpn_words(&setup.config.alpn_protocols),
            },
            other => other,
        };
    }
    match error.kind() {
        io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset if first.is_empty() => {
            HandshakeRefusal::Closed
        }
        io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset => from_first_bytes(first),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => HandshakeRefusal::Timeout,
        _ => HandshakeRefusal::Other(error.to_string()),
    }
}

fn alpn_words(protocols: &[Vec<u8>]) -> String {
    protocols
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The socket, keeping the first bytes the server sent.
struct Recording {
    stream: TcpStream,
    first: Vec<u8>,
}

impl Read for Recording {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.stream.read(buf)?;
        let room = FIRST_BYTES - self.first.len();
        self.first.extend_from_slice(&buf[..n.min(room)]);
        Ok(n)
    }
}

impl Write for Recording {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}
