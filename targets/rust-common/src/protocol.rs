//! What a trial speaks (`docs/contract.md`, "Protocols"): `HTTP_PROTOCOL`
//! names the HTTP version, `TLS_CERT` and `TLS_KEY` (both or neither) turn
//! the port into an HTTPS port.

use std::path::PathBuf;

use crate::env::EnvError;

/// `HTTP_PROTOCOL`: `http/1.1` (the default), `h2` (HTTP/2 over TLS, chosen
/// by ALPN) or `h2c` (cleartext HTTP/2 by prior knowledge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpProtocol {
    Http1,
    H2,
    H2c,
}

impl HttpProtocol {
    /// The name `HTTP_PROTOCOL` spells it with.
    pub fn name(self) -> &'static str {
        match self {
            Self::Http1 => "http/1.1",
            Self::H2 => "h2",
            Self::H2c => "h2c",
        }
    }

    /// The ALPN protocol ids a TLS port offers, preferred first: `h2` also
    /// serves HTTP/1.1 to a client that offers only that.
    pub fn alpn_ids(self) -> Vec<Vec<u8>> {
        match self {
            Self::H2 => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
            Self::Http1 | Self::H2c => vec![b"http/1.1".to_vec()],
        }
    }

    fn parse(raw: &str) -> Result<Self, EnvError> {
        match raw.trim() {
            "" | "http/1.1" => Ok(Self::Http1),
            "h2" => Ok(Self::H2),
            "h2c" => Ok(Self::H2c),
            _ => Err(EnvError(format!(
                "HTTP_PROTOCOL must be http/1.1, h2 or h2c, got {raw:?}"
            ))),
        }
    }
}

/// `TLS_CERT` (the leaf first, then its chain) and `TLS_KEY` (its PKCS#8
/// private key), both PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// The protocol of this run of the target, checked for consistency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protocols {
    pub http: HttpProtocol,
    /// `None`: plain TCP.
    pub tls: Option<TlsFiles>,
}

impl Protocols {
    /// Reads `HTTP_PROTOCOL`, `TLS_CERT` and `TLS_KEY` through `lookup`.
    pub fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
        let set = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let http = HttpProtocol::parse(&lookup("HTTP_PROTOCOL").unwrap_or_default())?;
        let tls = match (set("TLS_CERT"), set("TLS_KEY")) {
            (None, None) => None,
            (Some(cert), Some(key)) => Some(TlsFiles {
                cert: cert.into(),
                key: key.into(),
            }),
            (Some(_), None) => return Err(half_set("TLS_CERT", "TLS_KEY")),
            (None, Some(_)) => return Err(half_set("TLS_KEY", "TLS_CERT")),
        };
        match (http, tls.is_some()) {
            (HttpProtocol::H2, false) => Err(EnvError(
                "HTTP_PROTOCOL=h2 is HTTP/2 over TLS: set TLS_CERT and TLS_KEY, or ask for h2c"
                    .into(),
            )),
            (HttpProtocol::H2c, true) => Err(EnvError(
                "HTTP_PROTOCOL=h2c is cleartext HTTP/2: unset TLS_CERT and TLS_KEY, or ask for h2"
                    .into(),
            )),
            _ => Ok(Self { http, tls }),
        }
    }

    /// Refuses, at start, a protocol this target does not serve.
    pub fn require(
        &self,
        target: &str,
        served: &[HttpProtocol],
        why_not: &str,
    ) -> Result<(), EnvError> {
        if served.contains(&self.http) {
            return Ok(());
        }
        Err(EnvError(format!(
            "{target} does not serve HTTP_PROTOCOL={}: {why_not}",
            self.http.name()
        )))
    }

    /// How the port is described in the start-up line.
    pub fn describe(&self) -> String {
        match self.tls {
            Some(_) => format!("{} over TLS", self.http.name()),
            None => self.http.name().to_owned(),
        }
    }
}

fn half_set(set: &str, unset: &str) -> EnvError {
    EnvError(format!(
        "{set} is set but {unset} is not: set both (PEM files) to serve HTTPS, or neither"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<Protocols, EnvError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Protocols::from_lookup(&|name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn nothing_set_is_cleartext_http1() {
        let protocols = read(&[]).expect("valid");
        assert_eq!(protocols.http, HttpProtocol::Http1);
        assert_eq!(protocols.tls, None);
        assert_eq!(protocols.describe(), "http/1.1");
    }

    #[test]
    fn each_protocol_with_its_transport() {
        let tls = [("TLS_CERT", "/c.pem"), ("TLS_KEY", "/k.pem")];
        let h2 = read(&[tls[0], tls[1], ("HTTP_PROTOCOL", "h2")]).expect("h2");
        assert_eq!(h2.http, HttpProtocol::H2);
        assert_eq!(
            h2.tls,
            Some(TlsFiles {
                cert: "/c.pem".into(),
                key: "/k.pem".into()
            })
        );
        assert_eq!(h2.describe(), "h2 over TLS");
        let https = read(&[tls[0], tls[1], ("HTTP_PROTOCOL", "http/1.1")]).expect("https");
        assert_eq!(https.http, HttpProtocol::Http1);
        assert_eq!(
            read(&[("HTTP_PROTOCOL", "h2c")]).expect("h2c").http,
            HttpProtocol::H2c
        );
    }

    #[test]
    fn an_unknown_protocol_is_named() {
        let error = read(&[("HTTP_PROTOCOL", "h3")]).unwrap_err();
        assert_eq!(
            error.0,
            r#"HTTP_PROTOCOL must be http/1.1, h2 or h2c, got "h3""#
        );
    }

    #[test]
    fn tls_files_come_in_pairs_and_match_the_protocol() {
        let error = read(&[("TLS_CERT", "/c.pem")]).unwrap_err();
        assert!(
            error.0.starts_with("TLS_CERT is set but TLS_KEY is not"),
            "{error}"
        );
        let error = read(&[("TLS_KEY", "/k.pem")]).unwrap_err();
        assert!(
            error.0.starts_with("TLS_KEY is set but TLS_CERT is not"),
            "{error}"
        );
        let error = read(&[("HTTP_PROTOCOL", "h2")]).unwrap_err();
        assert!(error.0.contains("set TLS_CERT and TLS_KEY"), "{error}");
        let error = read(&[
            ("HTTP_PROTOCOL", "h2c"),
            ("TLS_CERT", "/c.pem"),
            ("TLS_KEY", "/k.pem"),
        ])
        .unwrap_err();
        assert!(error.0.contains("unset TLS_CERT and TLS_KEY"), "{error}");
    }

    #[test]
    fn alpn_offers_h2_only_when_asked() {
        assert_eq!(HttpProtocol::Http1.alpn_ids(), vec![b"http/1.1".to_vec()]);
        assert_eq!(
            HttpProtocol::H2.alpn_ids(),
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
    }

    #[test]
    fn a_protocol_not_served_is_refused_with_the_reason() {
        let h2c = read(&[("HTTP_PROTOCOL", "h2c")]).expect("h2c");
        let error = h2c
            .require("rust-x", &[HttpProtocol::Http1], "no HTTP/2 server")
            .unwrap_err();
        assert_eq!(
            error.0,
            "rust-x does not serve HTTP_PROTOCOL=h2c: no HTTP/2 server"
        );
        assert!(h2c.require("rust-x", &[HttpProtocol::H2c], "").is_ok());
    }
}
