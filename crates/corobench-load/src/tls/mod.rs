//! TLS between the generator and the server: what the user chose
//! ([`TlsOptions`]), the rustls configuration built from it once per run,
//! the check before the load that the server speaks TLS as asked, and the
//! per-connection session every backend drives (`session`).

mod ca_input;
mod config;
mod error;
mod insecure;
pub(crate) mod ktls;
mod probe;
pub(crate) mod session;

pub use ca_input::{CA_INPUT_LIMIT, CaInputError, ca_file_from};

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use rustls::ClientConfig;
use rustls::pki_types::ServerName;

pub use error::{HandshakeRefusal, TlsError};

/// The rustls client configuration `options` ask for, for a client of the
/// caller's own (one request to check an answer) that trusts a server as
/// the generator does.
///
/// # Errors
/// A CA file that cannot be read, or ciphers and versions that do not agree.
pub fn client_config(
    options: &TlsOptions,
) -> Result<std::sync::Arc<rustls::ClientConfig>, TlsError> {
    config::client_config(options).map(std::sync::Arc::new)
}
pub(crate) use probe::probe;

/// The protocols offered by ALPN when the user names none.
pub const DEFAULT_ALPN: &str = "http/1.1";

/// How the generator speaks TLS to an `https://` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsOptions {
    /// Check the server's certificate chain and name. Off, any certificate
    /// is accepted (as wrk does), though the handshake's signatures are
    /// still checked against the certificate's key.
    pub verify: bool,
    /// A PEM file of CA certificates to trust besides the built-in roots.
    pub ca_file: Option<PathBuf>,
    pub versions: TlsVersions,
    /// Cipher suites to offer, by their IANA names as rustls spells them
    /// (`TLS13_AES_128_GCM_SHA256`); empty: the provider's defaults.
    pub ciphers: Vec<String>,
    /// Resume earlier sessions (tickets or session ids) on new connections.
    pub resumption: bool,
    /// The name to send in SNI and check the certificate against; `None`:
    /// the URL's host.
    pub server_name: Option<String>,
    /// The protocols offered by ALPN, most preferred first; empty: no ALPN.
    pub alpn: Vec<String>,
    /// After each handshake, hand the session's keys to the kernel (kTLS).
    pub ktls: bool,
    pub provider: TlsProvider,
}

impl Default for TlsOptions {
    fn default() -> Self {
        Self {
            verify: true,
            ca_file: None,
            versions: TlsVersions::Any,
            ciphers: Vec::new(),
            resumption: true,
            server_name: None,
            alpn: vec![DEFAULT_ALPN.to_owned()],
            ktls: false,
            provider: TlsProvider::default(),
        }
    }
}

/// The TLS versions offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TlsVersions {
    /// TLS 1.2 and 1.3; the server picks.
    #[default]
    Any,
    Tls12,
    Tls13,
}

impl FromStr for TlsVersions {
    type Err = TlsError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().trim_start_matches("tls") {
            "1.2" | "v1.2" | "12" => Ok(Self::Tls12),
            "1.3" | "v1.3" | "13" => Ok(Self::Tls13),
            "any" | "both" | "1.2,1.3" => Ok(Self::Any),
            _ => Err(TlsError::UnknownVersion(text.to_owned())),
        }
    }
}

/// The crypto library behind rustls. Which ones exist depends on the
/// crate's features (`aws-lc-rs`, `ring`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsProvider {
    AwsLcRs,
    Ring,
}

impl Default for TlsProvider {
    /// ring where it was built in (the measured choice), else aws-lc-rs.
    fn default() -> Self {
        if cfg!(feature = "ring") {
            Self::Ring
        } else {
            Self::AwsLcRs
        }
    }
}

impl TlsProvider {
    /// Every provider this build holds.
    #[must_use]
    pub fn available() -> Vec<Self> {
        let mut all = Vec::new();
        if cfg!(feature = "aws-lc-rs") {
            all.push(Self::AwsLcRs);
        }
        if cfg!(feature = "ring") {
            all.push(Self::Ring);
        }
        all
    }

    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::AwsLcRs => "aws-lc-rs",
            Self::Ring => "ring",
        }
    }
}

impl FromStr for TlsProvider {
    type Err = TlsError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = match text.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "aws-lc-rs" | "aws-lc" => Self::AwsLcRs,
            "ring" => Self::Ring,
            _ => return Err(TlsError::UnknownProvider(text.to_owned())),
        };
        if Self::available().contains(&wanted) {
            Ok(wanted)
        } else {
            Err(TlsError::ProviderNotBuilt(wanted.name()))
        }
    }
}

/// The TLS side of a run, resolved once before it starts: the rustls
/// configuration every thread copies, and what the report says of it.
#[derive(Debug)]
pub(crate) struct TlsSetup {
    config: Arc<ClientConfig>,
    server_name: ServerName<'static>,
    /// The name the certificate must be valid for (a DNS name or an address).
    checked_name: String,
    pub(crate) facts: TlsFacts,
    pub(crate) ktls: bool,
}

/// What the report states about how TLS was set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TlsFacts {
    pub(crate) server_name: Option<String>,
    pub(crate) verified: bool,
    pub(crate) resumption: bool,
    pub(crate) ktls: bool,
    pub(crate) provider: &'static str,
}

impl TlsSetup {
    /// Builds the configuration for `options`, talking to `host` (the URL's
    /// host, without port or brackets) unless the options name the server.
    ///
    /// # Errors
    /// A CA file that cannot be used, an unknown or impossible choice of
    /// versions and cipher suites, a server name that is none, or kTLS
    /// asked for on a kernel without it.
    pub(crate) fn new(options: &TlsOptions, host: &str) -> Result<Self, TlsError> {
        if options.ktls {
            ktls::check_available()?;
        }
        let name = options.server_name.as_deref().unwrap_or(host);
        let server_name = ServerName::try_from(name.to_owned())
            .map_err(|_| TlsError::ServerName(name.to_owned()))?;
        let sent_name = match &server_name {
            ServerName::DnsName(dns) => Some(dns.as_ref().to_owned()),
            _ => None,
        };
        Ok(Self {
            config: Arc::new(config::client_config(options)?),
            server_name,
            checked_name: name.to_owned(),
            facts: TlsFacts {
                server_name: sent_name,
                verified: options.verify,
                resumption: options.resumption,
                ktls: options.ktls,
                provider: options.provider.name(),
            },
            ktls: options.ktls,
        })
    }

    /// A configuration for one generator thread: the run's, with a session
    /// cache of the thread's own, so that resuming never takes a lock
    /// another thread holds.
    pub(crate) fn for_thread(&self) -> ThreadTls {
        let mut config = (*self.config).clone();
        config.resumption = config::resumption(self.facts.resumption);
        ThreadTls {
            config: Arc::new(config),
            server_name: self.server_name.clone(),
            ktls: self.ktls,
        }
    }
}

/// One generator thread's TLS configuration.
#[derive(Debug)]
pub(crate) struct ThreadTls {
    pub(crate) config: Arc<ClientConfig>,
    pub(crate) server_name: ServerName<'static>,
    pub(crate) ktls: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_refuse_the_unknown() {
        assert_eq!("1.2".parse::<TlsVersions>().unwrap(), TlsVersions::Tls12);
        assert_eq!("TLS1.3".parse::<TlsVersions>().unwrap(), TlsVersions::Tls13);
        let error = "1.1".parse::<TlsVersions>().unwrap_err().to_string();
        assert!(
            error.contains("1.1") && error.contains("1.2 or 1.3"),
            "{error}"
        );
    }

    #[test]
    fn providers_parse_when_built() {
        let default = TlsProvider::default();
        assert_eq!(default.name().parse::<TlsProvider>().unwrap(), default);
        let error = "openssl".parse::<TlsProvider>().unwrap_err().to_string();
        assert!(error.contains("openssl"), "{error}");
    }
}
