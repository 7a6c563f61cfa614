//! Why TLS cannot be set up, or why the server refused the handshake
//! before the load. Each says what went wrong, why, and what to change.

use std::fmt;
use std::io;
use std::path::PathBuf;

use rustls::{AlertDescription, CertificateError};

/// A TLS setting that cannot be used, or a server whose handshake fails.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("unknown TLS version {0:?}: choose 1.2 or 1.3 (both are offered by default)")]
    UnknownVersion(String),
    #[error("unknown crypto provider {0:?}: choose aws-lc-rs or ring")]
    UnknownProvider(String),
    #[error(
        "the {0} crypto provider is not built into this corobench: rebuild with the cargo \
         feature corobench-load/{0}"
    )]
    ProviderNotBuilt(&'static str),
    #[error("unknown cipher suite {name:?}: {provider} offers {known}")]
    UnknownCipher {
        name: String,
        provider: &'static str,
        known: String,
    },
    #[error(
        "none of the cipher suites chosen ({chosen}) works with {versions}: choose suites of \
         that version (TLS13_* for TLS 1.3, TLS_ECDHE_* for TLS 1.2)"
    )]
    NoCipherForVersions { chosen: String, versions: String },
    #[error("cannot read the CA file {}: {source}", path.display())]
    CaFileUnreadable { path: PathBuf, source: io::Error },
    #[error(
        "the CA file {} holds no PEM certificate: give the CA's certificate as PEM \
         (-----BEGIN CERTIFICATE-----)",
        path.display()
    )]
    CaFileNotPem { path: PathBuf },
    #[error("the CA file {}: {why}", path.display())]
    CaFileInvalid { path: PathBuf, why: String },
    #[error(
        "{0:?} cannot be sent as a TLS server name (SNI): give a DNS name such as \
         example.com or an IP address"
    )]
    ServerName(String),
    #[error(
        "kernel TLS (kTLS) is not available here: {0}; it needs the kernel's `tls` module \
         (CONFIG_TLS; load it with `modprobe tls`)"
    )]
    KtlsUnavailable(String),
    #[error("kernel TLS (kTLS) could not take over the session: {0}")]
    KtlsRefused(String),
    #[error("the TLS handshake with {server} failed: {refusal}")]
    Handshake {
        server: String,
        refusal: HandshakeRefusal,
    },
    #[error("cannot set up TLS: {0}")]
    Rustls(String),
}

impl TlsError {
    /// Whether the user's own settings are at fault (rather than the server).
    #[must_use]
    pub fn is_setting(&self) -> bool {
        !matches!(self, Self::Handshake { .. })
    }
}

/// Why a server's handshake was refused, read from what it sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandshakeRefusal {
    /// The certificate is signed by no trusted CA (self-signed, or a private CA).
    UntrustedCertificate,
    /// The certificate is not valid for the name sent in SNI.
    WrongName { name: String },
    /// The certificate's validity ended.
    Expired,
    /// The certificate is not valid yet.
    NotValidYet,
    /// Another certificate problem.
    Certificate(String),
    /// The server answered in plaintext HTTP: the port does not speak TLS.
    PlaintextHttp,
    /// The server sent bytes that are neither TLS nor HTTP.
    NotTls,
    /// The server closed the connection during the handshake.
    Closed,
    /// No ALPN protocol offered is one the server serves.
    NoAlpn { offered: String },
    /// The server speaks none of the versions offered.
    Version,
    /// The server sent a fatal alert.
    Alert(String),
    /// The server did not finish the handshake in time.
    Timeout,
    /// Another TLS error.
    Other(String),
}

impl HandshakeRefusal {
    /// Reads the refusal from rustls's error; `first_bytes` are the first
    /// bytes the server sent, which tell plaintext HTTP from garbage.
    pub(crate) fn from_rustls(error: &rustls::Error, name: &str, first_bytes: &[u8]) -> Self {
        match error {
            rustls::Error::InvalidCertificate(certificate) => {
                certificate_refusal(certificate, name)
            }
            rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
                from_first_bytes(first_bytes)
            }
            rustls::Error::AlertReceived(AlertDescription::NoApplicationProtocol) => Self::NoAlpn {
                offered: String::new(),
            },
            rustls::Error::AlertReceived(
                AlertDescription::ProtocolVersion | AlertDescription::HandshakeFailure,
            )
            | rustls::Error::PeerIncompatible(_) => Self::Version,
            rustls::Error::AlertReceived(alert) => Self::Alert(format!("{alert:?}")),
            other => Self::Other(other.to_string()),
        }
    }
}

/// What the first bytes of an answer that is no TLS record say.
pub(crate) fn from_first_bytes(first_bytes: &[u8]) -> HandshakeRefusal {
    if first_bytes.starts_with(b"HTTP/") {
        HandshakeRefusal::PlaintextHttp
    } else {
        HandshakeRefusal::NotTls
    }
}

fn certificate_refusal(error: &CertificateError, name: &str) -> HandshakeRefusal {
    match error {
        CertificateError::UnknownIssuer | CertificateError::BadSignature => {
            HandshakeRefusal::UntrustedCertificate
        }
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            HandshakeRefusal::WrongName {
                name: name.to_owned(),
            }
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            HandshakeRefusal::Expired
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            HandshakeRefusal::NotValidYet
        }
        other => HandshakeRefusal::Certificate(format!("{other:?}")),
    }
}

impl fmt::Display for HandshakeRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UntrustedCertificate => f.write_str(
                "its certificate is not signed by a trusted CA (it is self-signed, or signed \
                 by a private CA); trust the CA that signed it, or turn the certificate check off",
            ),
            Self::WrongName { name } => write!(
                f,
                "its certificate is not valid for {name:?}; send the name it was issued for \
                 as the server name, or turn the certificate check off"
            ),
            Self::Expired => f.write_str(
                "its certificate has expired; renew it on the server, or turn the certificate \
                 check off",
            ),
            Self::NotValidYet => f.write_str(
                "its certificate is not valid yet (check both machines' clocks), or turn the \
                 certificate check off",
            ),
            Self::Certificate(why) => write!(f, "its certificate was refused ({why})"),
            Self::PlaintextHttp => f.write_str(
                "this port speaks plaintext HTTP, not TLS: it answered the TLS greeting with \
                 an HTTP response; load it with an http:// URL",
            ),
            Self::NotTls => f.write_str(
                "the server answered with bytes that are not TLS: does this port speak TLS?",
            ),
            Self::Closed => f.write_str(
                "the server closed the connection during the handshake: does this port speak \
                 TLS, and does it accept the versions and cipher suites offered?",
            ),
            Self::NoAlpn { offered } => write!(
                f,
                "the server accepts none of the application protocols offered by ALPN \
                 ({offered}); offer one it serves"
            ),
            Self::Version => f.write_str(
                "the server refused the versions, cipher suites or key exchange offered; offer \
                 others (both TLS 1.2 and 1.3 by default)",
            ),
            Self::Alert(alert) => write!(f, "the server refused it with the alert {alert}"),
            Self::Timeout => f.write_str("the server did not complete it within the timeout"),
            Self::Other(why) => f.write_str(why),
        }
    }
}
