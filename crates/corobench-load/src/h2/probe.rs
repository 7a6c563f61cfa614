//! The check before an HTTP/2 run that the server speaks it as asked: over
//! TLS the server must choose `h2` by ALPN; in cleartext (h2c by prior
//! knowledge) it must answer the preface with its SETTINGS. Asking for a
//! protocol and measuring another is never done silently.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use super::frame::{self, HEAD_BYTES, Head, kind};
use crate::error::LoadError;

/// Over TLS: the protocol the handshake agreed by ALPN must be `h2`.
///
/// # Errors
/// The server chose another protocol, or none.
pub(crate) fn check_alpn(server: &str, alpn: Option<&[u8]>) -> Result<(), LoadError> {
    match alpn {
        Some(b"h2") => Ok(()),
        Some(other) => Err(LoadError::Protocol(format!(
            "{server} agreed on {:?} by ALPN when h2 was asked: it does not serve HTTP/2 over \
             TLS here; load it without --h2 to measure HTTP/1.1",
            String::from_utf8_lossy(other)
        ))),
        None => Err(LoadError::Protocol(format!(
            "{server} chose no protocol by ALPN when h2 was asked: it does not serve HTTP/2 over \
             TLS (ALPN h2); load it without --h2 to measure HTTP/1.1"
        ))),
    }
}

/// Cleartext: sends the preface and our (empty) SETTINGS on `stream` and
/// reads what comes back.
///
/// # Errors
/// The server answered in HTTP/1.1, with TLS records, with something other
/// than SETTINGS, or closed the connection.
pub(crate) fn check_h2c(
    mut stream: TcpStream,
    server: &str,
    timeout: Duration,
) -> Result<(), LoadError> {
    let refuse = |why: String| LoadError::Protocol(format!("{server}: {why}"));
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let mut hello = frame::PREFACE.to_vec();
    frame::write_settings(&mut hello, &[]);
    stream
        .write_all(&hello)
        .map_err(|e| refuse(format!("cannot send the HTTP/2 preface: {e}")))?;
    let mut answer = [0u8; HEAD_BYTES];
    let mut have = 0;
    while have < HEAD_BYTES {
        match stream.read(&mut answer[have..]) {
            Ok(0) => break,
            Ok(n) => have += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if have == 0 => {
                return Err(refuse(format!(
                    "no answer to the HTTP/2 preface ({e}): does it speak h2c (cleartext \
                     HTTP/2 by prior knowledge)?"
                )));
            }
            Err(_) => break,
        }
    }
    verdict(&answer[..have]).map_err(|why| refuse(why.to_owned()))
}

/// What the first bytes answering the preface say about the server.
fn verdict(first: &[u8]) -> Result<(), &'static str> {
    if first.starts_with(b"HTTP/") {
        return Err(
            "this server speaks HTTP/1.1, not h2c: it answered the HTTP/2 preface \
                    with an HTTP/1.1 response; load it without --h2c",
        );
    }
    if matches!(first, [20..=23, 3, 0..=4, ..]) {
        return Err(
            "this port speaks TLS: it answered the cleartext HTTP/2 preface with TLS \
                    records; load it with an https:// URL and --h2",
        );
    }
    let Ok(head) = <&[u8; HEAD_BYTES]>::try_from(first) else {
        return Err(
            "the server closed the connection on the HTTP/2 preface: it does not \
                    speak h2c (cleartext HTTP/2 by prior knowledge)",
        );
    };
    if Head::parse(head).kind != kind::SETTINGS {
        return Err(
            "the server answered the HTTP/2 preface with something other than its \
                    SETTINGS: it does not speak h2c as RFC 9113 §3.4 asks",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bytes_name_what_the_server_speaks() {
        assert!(
            verdict(b"HTTP/1.1 400 Bad Request\r\n")
                .unwrap_err()
                .contains("HTTP/1.1, not h2c")
        );
        assert!(
            verdict(&[22, 3, 1, 0, 5, 2, 0, 0, 1])
                .unwrap_err()
                .contains("speaks TLS")
        );
        assert!(verdict(b"").unwrap_err().contains("closed"));
        let mut settings = Vec::new();
        frame::write_settings(&mut settings, &[]);
        assert_eq!(verdict(&settings), Ok(()));
        let mut ping = Vec::new();
        frame::write_ping_ack(&mut ping, &[0; 8]);
        assert!(verdict(&ping[..9]).unwrap_err().contains("other than"));
    }

    #[test]
    fn alpn_must_be_h2() {
        assert!(check_alpn("s", Some(b"h2")).is_ok());
        let error = check_alpn("s", Some(b"http/1.1")).unwrap_err().to_string();
        assert!(
            error.contains("\"http/1.1\"") && error.contains("without --h2"),
            "{error}"
        );
        assert!(
            check_alpn("s", None)
                .unwrap_err()
                .to_string()
                .contains("no protocol")
        );
    }
}
