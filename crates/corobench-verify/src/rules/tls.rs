//! The TLS rules: tls-certificate (the leaf served is the one given),
//! tls-alpn (ALPN agrees on the trial's protocol) and tls-refuses-cleartext
//! (a cleartext request on the TLS port is not served).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use corobench_target::TlsFiles;
use corobench_target::tls::server_name;

use super::{Check, Target, Verdict};
use crate::client::Request;
use crate::transport::Connector;

/// How long a TLS port may take to say anything to a cleartext request.
const CLEARTEXT_WAIT: Duration = Duration::from_secs(2);

pub(super) fn certificate(target: Target, files: &TlsFiles) -> Check {
    let expected = files
        .leaf_der()
        .map_err(|e| format!("cannot read the certificate the target was given: {e}"))?;
    let stream = target
        .link
        .connector
        .connect(target.addr, target.timeout)
        .map_err(|e| {
            format!(
                "{e}; expected the certificate of TLS_CERT ({}), which the run's authority signed",
                files.cert.display()
            )
        })?;
    let served = stream
        .tls()
        .and_then(|connection| connection.peer_certificates())
        .and_then(|chain| chain.first());
    match served {
        Some(leaf) if leaf.as_ref() == expected.as_ref() => Ok(Verdict::Pass),
        Some(_) => Err(format!(
            "the server's certificate is not the one in TLS_CERT ({}), though the run's \
             authority signed it",
            files.cert.display()
        )),
        None => Err("the server sent no certificate".to_owned()),
    }
}

/// Over `tls` a client that offers only `http/1.1` agrees on it; over `h2`
/// a client that offers `h2` and `http/1.1` gets `h2`.
pub(super) fn alpn(target: Target, files: &TlsFiles) -> Check {
    let wanted = target.link.protocol.alpn();
    let offered: &[&[u8]] = if target.link.protocol.is_h2() {
        &[b"h2", b"http/1.1"]
    } else {
        &[b"http/1.1"]
    };
    let names = |ids: &[&[u8]]| {
        ids.iter()
            .map(|id| String::from_utf8_lossy(id).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let config = files
        .client_config(offered)
        .map_err(|e| format!("cannot trust the run's authority: {e}"))?;
    let connector = Connector::Tls {
        config,
        name: server_name(target.addr.ip()),
    };
    let stream = connector
        .connect(target.addr, target.timeout)
        .map_err(|e| format!("offering ALPN {}: {e}", names(offered)))?;
    let agreed = stream.tls().and_then(|c| c.alpn_protocol());
    if agreed == Some(wanted) {
        return Ok(Verdict::Pass);
    }
    let agreed = agreed.map_or_else(|| "none".to_owned(), |id| names(&[id]));
    Err(format!(
        "offered ALPN {}, the server agreed on {agreed}; expected {}",
        names(offered),
        names(&[wanted])
    ))
}

/// A cleartext request on the TLS port may get a TLS alert, a closed
/// connection, silence or a 4xx refusal (Go's and nginx's "plain HTTP sent to
/// an HTTPS port"), never an answer that serves it.
pub(super) fn refuses_cleartext(target: Target) -> Check {
    let label = "GET /plaintext in cleartext on the TLS port";
    let mut tcp = TcpStream::connect_timeout(&target.addr, target.timeout)
        .map_err(|e| format!("{label}: cannot connect: {e}"))?;
    tcp.set_read_timeout(Some(CLEARTEXT_WAIT))
        .map_err(|e| format!("{label}: {e}"))?;
    let request = Request::get("/plaintext").closing().to_bytes();
    if tcp.write_all(&request).is_err() {
        return Ok(Verdict::Pass); // refused before it was even read
    }
    let mut answer = Vec::new();
    let mut chunk = [0u8; 256];
    while answer.len() < 64 {
        match tcp.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&answer);
    let status = text
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.get(2..5))
        .and_then(|code| code.parse::<u16>().ok());
    match status {
        Some(code) if code < 400 => Err(format!(
            "{label}: answered {code} in cleartext ({:?}); expected the port to speak TLS only",
            text.lines().next().unwrap_or_default()
        )),
        _ => Ok(Verdict::Pass),
    }
}
