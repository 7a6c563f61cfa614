//! The check before an HTTP/2 run that the server speaks it as asked: over
//! TLS the server must choose `h2` by ALPN; in cleartext (h2c by prior
//! knowledge) it must answer the preface with its SETTINGS. Asking for a
//! protocol and measuring another is never done silently.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use super::frame::{self, HEAD_BYTES, Head, kind};
use crate::error::{LoadError, ProtocolFix, Setting};

/// Over TLS: the protocol the handshake agreed by ALPN must be `h2`.
///
/// # Errors
/// The server chose another protocol, or none.
pub(crate) fn check_alpn(server: &str, alpn: Option<&[u8]>) -> Result<(), LoadError> {
    match alpn {
        Some(b"h2") => Ok(()),
        Some(other) => Err(not_h2(format!(
            "{server} agreed on {:?} by ALPN when h2 was asked: it does not serve HTTP/2 over \
             TLS here; HTTP/1.1 over TLS can be measured",
            String::from_utf8_lossy(other)
        ))),
        None => Err(not_h2(format!(
            "{server} chose no protocol by ALPN when h2 was asked: it does not serve HTTP/2 over \
             TLS (ALPN h2); HTTP/1.1 over TLS can be measured"
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
    let refuse = |why: String, fix| LoadError::Protocol {
        asked: Setting::H2c,
        fix,
        message: format!("{server}: {why}"),
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let mut hello = frame::PREFACE.to_vec();
    frame::write_settings(&mut hello, &[]);
    stream
        .write_all(&hello)
        .map_err(|e| refuse(format!("cannot send the HTTP/2 preface: {e}"), None))?;
    let mut answer = [0u8; HEAD_BYTES];
    let mut have = 0;
    while have < HEAD_BYTES {
        match stream.read(&mut answer[have..]) {
            Ok(0) => break,
            Ok(n) => have += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if have == 0 => {
                return Err(refuse(
                    format!(
                        "no answer to the HTTP/2 preface ({e}): does it speak h2c (cleartext \
                         HTTP/2 by prior knowledge)?"
                    ),
                    None,
                ));
            }
            Err(_) => break,
        }
    }
    verdict(&answer[..have]).map_err(|(why, fix)| refuse(why.to_owned(), fix))
}

/// A server that does not serve HTTP/2 over TLS, and serves HTTP/1.1.
fn not_h2(message: String) -> LoadError {
    LoadError::Protocol {
        asked: Setting::H2,
        fix: Some(ProtocolFix::Http1),
        message,
    }
}

/// What the first bytes answering the preface say about the server, and
/// what would get it measured.
fn verdict(first: &[u8]) -> Result<(), (&'static str, Option<ProtocolFix>)> {
    if first.starts_with(b"HTTP/") {
        return Err((
            "this server speaks HTTP/1.1, not h2c: it answered the HTTP/2 preface with an \
             HTTP/1.1 response; HTTP/1.1 can be measured",
            Some(ProtocolFix::Http1),
        ));
    }
    if matches!(first, [20..=23, 3, 0..=4, ..]) {
        return Err((
            "this port speaks TLS: it answered the cleartext HTTP/2 preface with TLS records; \
             HTTP/2 over TLS (h2) at its https:// URL can be measured",
            Some(ProtocolFix::OverTls),
        ));
    }
    let Ok(head) = <&[u8; HEAD_BYTES]>::try_from(first) else {
        return Err((
            "the server closed the connection on the HTTP/2 preface: it does not speak h2c \
             (cleartext HTTP/2 by prior knowledge)",
            None,
        ));
    };
    if Head::parse(head).kind != kind::SETTINGS {
        return Err((
            "the server answered the HTTP/2 preface with something other than its SETTINGS: \
             it does not speak h2c as RFC 9113 §3.4 asks",
            None,
        ));
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
                .0
                .contains("HTTP/1.1, not h2c")
        );
        assert!(
            verdict(&[22, 3, 1, 0, 5, 2, 0, 0, 1])
                .unwrap_err()
                .0
                .contains("speaks TLS")
        );
        assert!(verdict(b"").unwrap_err().0.contains("closed"));
        let mut settings = Vec::new();
        frame::write_settings(&mut settings, &[]);
        assert_eq!(verdict(&settings), Ok(()));
        let mut ping = Vec::new();
        frame::write_ping_ack(&mut ping, &[0; 8]);
        assert!(verdict(&ping[..9]).unwrap_err().0.contains("other than"));
    }

    #[test]
    fn alpn_must_be_h2() {
        assert!(check_alpn("s", Some(b"h2")).is_ok());
        let refused = check_alpn("s", Some(b"http/1.1")).unwrap_err();
        assert!(
            matches!(
                refused,
                LoadError::Protocol {
                    asked: Setting::H2,
                    fix: Some(ProtocolFix::Http1),
                    ..
                }
            ),
            "{refused:?}"
        );
        let error = refused.to_string();
        assert!(
            error.contains("\"http/1.1\"") && error.contains("HTTP/1.1 over TLS can be measured"),
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
