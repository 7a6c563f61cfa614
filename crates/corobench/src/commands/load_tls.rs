//! The TLS flags of `corobench load` (https:// URLs), and the flag to
//! name when TLS cannot be set up or the server's handshake fails.

use std::path::PathBuf;

use clap::Args;
use corobench_load::{
    DEFAULT_ALPN, Endpoint, HandshakeRefusal, LoadError, TlsError, TlsProvider, TlsVersions,
};

use crate::exit::{self, Exit};

/// How `corobench load` speaks TLS to an https:// URL.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "TLS (https:// URLs)")]
pub struct TlsArgs {
    /// Accept any certificate, unchecked (as wrk does); the handshake's
    /// signatures are still verified, so a handshake costs the same
    #[arg(short = 'k', long)]
    pub insecure: bool,

    /// Also trust the CA certificates in this PEM file
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,

    /// Offer only this TLS version: 1.2 or 1.3 [default: both]
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    pub tls_version: Option<TlsVersions>,

    /// Offer only these cipher suites, by their IANA names as rustls spells
    /// them, e.g. TLS13_AES_128_GCM_SHA256 [default: the provider's]
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub tls_ciphers: Vec<String>,

    /// Resume earlier TLS sessions on new connections (the default, as
    /// wrk's session cache does)
    #[arg(long, overrides_with = "no_tls_resume")]
    pub tls_resume: bool,

    /// Never resume a TLS session: every connection does a full handshake
    #[arg(long, overrides_with = "tls_resume")]
    pub no_tls_resume: bool,

    /// The server name to send (SNI) and check the certificate against
    /// [default: the URL's host]
    #[arg(long, value_name = "NAME")]
    pub sni: Option<String>,

    /// Protocols to offer by ALPN, most preferred first; `none` offers
    /// none [default: http/1.1]
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub alpn: Vec<String>,

    /// After each handshake, hand the session's keys to the kernel (kTLS,
    /// epoll backend), which then encrypts and decrypts; fails when the
    /// kernel has no `tls` module
    #[arg(long)]
    pub ktls: bool,

    /// The crypto library behind TLS, where this build has several:
    /// aws-lc-rs or ring
    #[arg(long, value_name = "NAME", value_parser = parse_provider)]
    pub tls_provider: Option<TlsProvider>,
}

impl TlsArgs {
    /// Whether any TLS flag was given.
    fn any(&self) -> bool {
        self.insecure
            || self.ca.is_some()
            || self.tls_version.is_some()
            || !self.tls_ciphers.is_empty()
            || self.tls_resume
            || self.no_tls_resume
            || self.sni.is_some()
            || !self.alpn.is_empty()
            || self.ktls
            || self.tls_provider.is_some()
    }

    /// Applies the flags to an https:// endpoint's TLS options.
    ///
    /// # Errors
    /// TLS flags with a plain http:// URL.
    pub fn apply(&self, endpoint: &mut Endpoint) -> anyhow::Result<()> {
        let Some(options) = endpoint.tls.as_mut() else {
            if self.any() {
                return Err(exit::usage(format!(
                    "the TLS flags (--insecure, --ca, --tls-version, ...) are for https:// \
                     URLs, and {} is plain http://",
                    endpoint.url
                )));
            }
            return Ok(());
        };
        options.verify = !self.insecure;
        options.ca_file.clone_from(&self.ca);
        if let Some(versions) = self.tls_version {
            options.versions = versions;
        }
        options.ciphers.clone_from(&self.tls_ciphers);
        options.resumption = !self.no_tls_resume;
        options.server_name.clone_from(&self.sni);
        options.alpn = match self.alpn.as_slice() {
            [] => vec![DEFAULT_ALPN.to_owned()],
            [none] if none == "none" => Vec::new(),
            list => list.to_vec(),
        };
        options.ktls = self.ktls;
        if let Some(provider) = self.tls_provider {
            options.provider = provider;
        }
        Ok(())
    }
}

fn parse_version(text: &str) -> Result<TlsVersions, String> {
    text.parse().map_err(|e: TlsError| e.to_string())
}

fn parse_provider(text: &str) -> Result<TlsProvider, String> {
    text.parse().map_err(|e: TlsError| e.to_string())
}

/// A load that could not start, with the flag that changes what went
/// wrong when TLS is at fault: a setting is a usage error, a server whose
/// handshake fails has failed.
pub fn explain(error: LoadError) -> anyhow::Error {
    let LoadError::Tls(tls) = &error else {
        return error.into();
    };
    let exit = if tls.is_setting() {
        Exit::Usage
    } else {
        Exit::TargetFailed
    };
    exit::Failure {
        exit,
        message: format!("{tls}{}", hint(tls)),
    }
    .into()
}

fn hint(error: &TlsError) -> &'static str {
    match error {
        TlsError::Handshake { refusal, .. } => match refusal {
            HandshakeRefusal::UntrustedCertificate => " (--ca FILE, or --insecure)",
            HandshakeRefusal::WrongName { .. } => " (--sni NAME, or --insecure)",
            HandshakeRefusal::Expired
            | HandshakeRefusal::NotValidYet
            | HandshakeRefusal::Certificate(_) => " (--insecure)",
            HandshakeRefusal::NoAlpn { .. } => " (--alpn)",
            HandshakeRefusal::Version | HandshakeRefusal::Closed => {
                " (--tls-version, --tls-ciphers)"
            }
            HandshakeRefusal::Timeout => " (--timeout)",
            _ => "",
        },
        TlsError::UnknownVersion(_) => " (--tls-version)",
        TlsError::UnknownCipher { .. } | TlsError::NoCipherForVersions { .. } => {
            " (--tls-ciphers, --tls-version)"
        }
        TlsError::CaFileUnreadable { .. }
        | TlsError::CaFileNotPem { .. }
        | TlsError::CaFileInvalid { .. } => " (--ca)",
        TlsError::ServerName(_) => " (--sni)",
        TlsError::KtlsUnavailable(_) | TlsError::KtlsRefused(_) => {
            "; or run without --ktls, encrypting in corobench"
        }
        TlsError::UnknownProvider(_) | TlsError::ProviderNotBuilt(_) => " (--tls-provider)",
        _ => "",
    }
}
