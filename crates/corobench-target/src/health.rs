//! The readiness probe: one blocking `GET PATH` (the contract's `/healthz`,
//! or a user server's own path) in the protocol the target serves, or a
//! connection.

mod h2;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use crate::error::TargetError;
use crate::manifest::Readiness;
use crate::protocol::Protocol;
use crate::tls::{self, TlsFiles};

/// How long one probe may take to connect, and then to answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// Enough of a response to hold its status line.
const MAX_HEAD_BYTES: usize = 1024;

/// How a target's readiness is asked: in the protocol it serves, trusting
/// only the run's authority over TLS.
#[derive(Clone, Debug)]
pub(crate) struct Probe {
    protocol: Protocol,
    tls: Option<Arc<rustls::ClientConfig>>,
}

impl Probe {
    pub fn cleartext(protocol: Protocol) -> Self {
        Self {
            protocol,
            tls: None,
        }
    }

    /// A probe over TLS that offers the protocol's ALPN id.
    pub fn over_tls(protocol: Protocol, files: &TlsFiles) -> Result<Self, TargetError> {
        Ok(Self {
            protocol,
            tls: Some(files.client_config(&[protocol.alpn()])?),
        })
    }

    /// The status code `GET PATH` answered with, or why there was none.
    fn status(&self, addr: SocketAddr, path: &str) -> Result<u16, String> {
        if self.protocol.is_h2() {
            return h2::status(addr, path, self.tls.clone(), PROBE_TIMEOUT);
        }
        let stream = connect(addr)?;
        match &self.tls {
            None => http1_status(stream, addr, path),
            Some(config) => {
                let connection =
                    rustls::ClientConnection::new(config.clone(), tls::server_name(addr.ip()))
                        .map_err(|e| format!("TLS: {e}"))?;
                http1_status(rustls::StreamOwned::new(connection, stream), addr, path)
            }
        }
    }
}

/// Whether the server at `addr` is ready as `readiness` says: `Err` with
/// what the attempt found (refused, a status, not HTTP).
///
/// # Errors
/// The server is not ready yet, and why.
pub(crate) fn ready(addr: SocketAddr, readiness: &Readiness, probe: &Probe) -> Result<(), String> {
    match readiness {
        Readiness::Port => TcpStream::connect_timeout(&addr, PROBE_TIMEOUT)
            .map(drop)
            .map_err(|e| format!("connect: {e}")),
        Readiness::Http(path) => match probe.status(addr, path)? {
            200..=299 => Ok(()),
            code => Err(format!("GET {path} answered {code}")),
        },
    }
}

fn connect(addr: SocketAddr) -> Result<TcpStream, String> {
    let stream =
        TcpStream::connect_timeout(&addr, PROBE_TIMEOUT).map_err(|e| format!("connect: {e}"))?;
    stream
        .set_read_timeout(Some(PROBE_TIMEOUT))
        .map_err(|e| e.to_string())?;
    stream
        .set_write_timeout(Some(PROBE_TIMEOUT))
        .map_err(|e| e.to_string())?;
    Ok(stream)
}

/// The status code of `GET PATH` over HTTP/1.1 on `stream`.
fn http1_status(
    mut stream: impl Read + Write,
    addr: SocketAddr,
    path: &str,
) -> Result<u16, String> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("send: {e}"))?;
    let mut head = Vec::with_capacity(MAX_HEAD_BYTES);
    let mut buffer = [0u8; 512];
    while !head.contains(&b'\n') && head.len() < MAX_HEAD_BYTES {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&buffer[..n]),
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    status_code(&head)
}

/// The code of an `HTTP/1.x NNN reason` status line.
fn status_code(head: &[u8]) -> Result<u16, String> {
    let text = String::from_utf8_lossy(head);
    let line = text.lines().next().unwrap_or("");
    let mut parts = line.split(' ');
    let code = match (parts.next(), parts.next()) {
        (Some(version), Some(code)) if version.starts_with("HTTP/1.") => code.parse::<u16>().ok(),
        _ => None,
    };
    code.ok_or_else(|| {
        if line.is_empty() {
            "the connection closed without a response".to_string()
        } else {
            format!(
                "not an HTTP/1.x status line: {:?}",
                line.chars().take(80).collect::<String>()
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn reads_status_lines() {
        assert_eq!(status_code(b"HTTP/1.1 200 OK\r\nServer: x\r\n"), Ok(200));
        assert_eq!(
            status_code(b"HTTP/1.0 503 Service Unavailable\r\n"),
            Ok(503)
        );
        assert!(
            status_code(b"")
                .unwrap_err()
                .contains("closed without a response")
        );
        assert!(
            status_code(b"SSH-2.0-OpenSSH\r\n")
                .unwrap_err()
                .contains("not an HTTP/1.x status line")
        );
    }

    #[test]
    fn probes_a_listening_socket() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut request = [0u8; 512];
            let n = conn.read(&mut request).unwrap();
            conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .unwrap();
            String::from_utf8_lossy(&request[..n]).into_owned()
        });
        let probe = Probe::cleartext(Protocol::HTTP1);
        assert_eq!(probe.status(addr, "/healthz"), Ok(200));
        assert!(
            server
                .join()
                .unwrap()
                .starts_with("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:")
        );
    }

    #[test]
    fn a_closed_port_is_refused() {
        let addr = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let probe = Probe::cleartext(Protocol::HTTP1);
        let error = probe.status(addr, "/healthz").unwrap_err();
        assert!(error.starts_with("connect:"), "{error}");
    }
}
