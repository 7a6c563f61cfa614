//! How the engine reaches a trial's server: the one place that turns a
//! scenario's protocol into the scheme, the trusted authority, the ALPN and
//! the HTTP/2 settings of every client the engine opens to it (the load
//! generator, the `/stats` probe). A target corobench starts is trusted
//! through the run's own authority, with the address as the name checked,
//! as the run's certificate names it; a server already running at an
//! `https://` URL through the roots and the spec's `ca`, or not at all
//! (`insecure`).

use std::net::SocketAddr;
use std::path::PathBuf;

use corobench_load::{Endpoint, Http2Options, LoadError};
use corobench_model::{Protocol, Schedule};
use corobench_target::{AttachedTls, TlsFiles};
use corobench_verify::transport::Connector;

/// Whose word makes a server's certificate good.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    /// The run's own authority (`TLS_CERT` was signed by it).
    RunAuthority(PathBuf),
    /// A server already running: the built-in roots plus its `ca`, or
    /// nothing checked.
    Attached(AttachedTls),
    /// Cleartext: nothing to trust.
    Cleartext,
}

impl Trust {
    /// The trust of a target the run starts speaking `protocol`.
    #[must_use]
    pub fn of_started(protocol: Protocol, tls: Option<&TlsFiles>) -> Self {
        match tls {
            Some(files) if protocol.tls => Self::RunAuthority(files.ca.clone()),
            _ => Self::Cleartext,
        }
    }
}

/// The generator's endpoint for `path` on `addr` in `schedule`'s protocol:
/// `https://` over TLS, trusting `trust`, offering the protocol's ALPN and
/// resuming sessions as the schedule says.
///
/// # Errors
/// A path the generator cannot send, or TLS with nothing to trust.
pub fn endpoint(
    schedule: &Schedule,
    trust: &Trust,
    addr: SocketAddr,
    path: &str,
) -> Result<Endpoint, LoadError> {
    let protocol = schedule.protocol;
    let scheme = if protocol.tls { "https" } else { "http" };
    let mut endpoint = Endpoint::from_url(&format!("{scheme}://{addr}{path}"))?;
    if let Some(options) = endpoint.tls.as_mut() {
        match trust {
            Trust::RunAuthority(ca) => options.ca_file = Some(ca.clone()),
            Trust::Attached(attached) => {
                options.ca_file.clone_from(&attached.ca);
                options.verify = !attached.insecure;
            }
            Trust::Cleartext => {
                return Err(LoadError::config(
                    &[],
                    format!("{protocol} needs the run's certificates, and none were made"),
                ));
            }
        }
        options.alpn = vec![String::from_utf8_lossy(protocol.alpn()).into_owned()];
        options.resumption = schedule.tls_resume;
    }
    Ok(endpoint)
}

/// The HTTP/2 settings of `schedule`: its streams per connection, and the
/// generator's default windows; `None` for HTTP/1.1.
#[must_use]
pub fn http2(schedule: &Schedule) -> Option<Http2Options> {
    schedule.protocol.is_h2().then(|| Http2Options {
        streams: schedule.streams,
        ..Http2Options::default()
    })
}

/// How the engine's own requests reach a server that speaks `protocol`,
/// in that protocol: cleartext (HTTP/1.1 or h2c by prior knowledge), or
/// TLS trusting what the run trusts and offering the protocol's ALPN id
/// alone. `None` for TLS with nothing to trust.
#[must_use]
pub fn connector(protocol: Protocol, trust: &Trust, addr: SocketAddr) -> Option<Connector> {
    if !protocol.tls {
        return Some(Connector::Plain);
    }
    let alpn: &[u8] = if protocol.is_h2() { b"h2" } else { b"http/1.1" };
    let config = match trust {
        Trust::RunAuthority(ca) => corobench_target::tls::client_config(ca, &[alpn]).ok()?,
        Trust::Attached(attached) => {
            corobench_load::tls_client_config(&corobench_load::TlsOptions {
                verify: !attached.insecure,
                ca_file: attached.ca.clone(),
                alpn: vec![String::from_utf8_lossy(alpn).into_owned()],
                ..corobench_load::TlsOptions::default()
            })
            .ok()?
        }
        Trust::Cleartext => return None,
    };
    Some(Connector::Tls {
        config,
        name: corobench_target::tls::server_name(addr.ip()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_trusts_the_runs_authority_and_offers_the_protocols_alpn() {
        let dir = tempfile::tempdir().unwrap();
        let certificates =
            corobench_target::RunCertificates::create(&dir.path().join("tls"), &[]).unwrap();
        let addr: SocketAddr = "127.0.0.1:8443".parse().unwrap();
        let files = certificates.files();
        let trust = Trust::of_started(Protocol::TLS, Some(files));
        let tls = Schedule::closed(4).with_protocol(Protocol::TLS);
        let over_tls = endpoint(&tls, &trust, addr, "/json").unwrap();
        assert_eq!(over_tls.url, "https://127.0.0.1:8443/json");
        let options = over_tls.tls.unwrap();
        assert_eq!(options.ca_file.as_deref(), Some(files.ca.as_path()));
        assert_eq!(options.alpn, ["http/1.1"]);
        assert!(
            options.verify,
            "the certificate is checked against the run's CA"
        );
        assert!(options.resumption);
        let full = endpoint(&tls.with_tls_resume(false), &trust, addr, "/json").unwrap();
        assert!(
            !full.tls.unwrap().resumption,
            "no-resume pays a full handshake each"
        );
        let plain = Schedule::closed(4);
        let cleartext = endpoint(&plain, &Trust::Cleartext, addr, "/json").unwrap();
        assert_eq!(cleartext.url, "http://127.0.0.1:8443/json");
        assert!(cleartext.tls.is_none());
        let error = endpoint(&tls, &Trust::Cleartext, addr, "/json").unwrap_err();
        assert!(error.to_string().contains("certificates"), "{error}");
        assert!(matches!(
            connector(Protocol::TLS, &trust, addr),
            Some(Connector::Tls { .. })
        ));
        assert!(matches!(
            connector(Protocol::H2C, &Trust::Cleartext, addr),
            Some(Connector::Plain)
        ));
    }

    #[test]
    fn http2_offers_h2_with_the_schedules_streams() {
        let addr: SocketAddr = "127.0.0.1:8443".parse().unwrap();
        let h2 = Schedule::closed(1)
            .with_protocol(Protocol::H2)
            .with_streams(100);
        let trust = Trust::Attached(AttachedTls {
            ca: None,
            insecure: true,
        });
        let endpoint = endpoint(&h2, &trust, addr, "/").unwrap();
        let options = endpoint.tls.unwrap();
        assert_eq!(options.alpn, ["h2"]);
        assert!(!options.verify, "insecure turns the check off");
        assert_eq!(http2(&h2).unwrap().streams, 100);
        assert!(http2(&Schedule::closed(1)).is_none());
        let h2c = Schedule::closed(1).with_protocol(Protocol::H2C);
        assert_eq!(http2(&h2c).unwrap().streams, 1);
    }
}
