//! The TLS flags of `corobench load` (https:// URLs), and the flag to
//! name when TLS cannot be set up or the server's handshake fails.

use std::path::PathBuf;

use clap::Args;
use corobench_load::{CaInputError, DEFAULT_ALPN, Endpoint, TlsError, TlsProvider, TlsVersions};

use crate::exit;

/// How `corobench load` speaks TLS to an https:// URL.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "TLS (https:// URLs)")]
pub struct TlsArgs {
    /// Accept any certificate, unchecked (as wrk does); the handshake's
    /// signatures are still verified, so a handshake costs the same
    #[arg(short = 'k', long)]
    pub insecure: bool,

    /// Also trust the CA certificates in this PEM file; `-` reads them from
    /// stdin (how a run on hosts hands its authority to a generator host)
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

    /// With `--ca -`, the CA certificates read from stdin to its end, kept
    /// in a private temporary file (removed when it is dropped) that
    /// stands for `-`.
    ///
    /// # Errors
    /// Stdin cannot be read, is empty or too long, or the file cannot be
    /// written.
    pub fn ca_from_stdin(&self) -> anyhow::Result<Option<tempfile::NamedTempFile>> {
        if self.ca.as_deref() != Some(std::path::Path::new("-")) {
            return Ok(None);
        }
        match corobench_load::ca_file_from(std::io::stdin().lock()) {
            Ok(file) => Ok(Some(file)),
            Err(e @ CaInputError::Write(_)) => Err(e.into()),
            Err(e) => Err(exit::usage(format!(
                "--ca - reads PEM certificates from stdin, and {e}: write them on stdin, or \
                 name their file with --ca FILE"
            ))),
        }
    }

    /// Applies the flags to an https:// endpoint's TLS options; `stdin_ca`
    /// is the file that stands for `--ca -`.
    ///
    /// # Errors
    /// TLS flags with a plain http:// URL.
    pub fn apply(
        &self,
        endpoint: &mut Endpoint,
        stdin_ca: Option<&std::path::Path>,
    ) -> anyhow::Result<()> {
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
        options.ca_file = stdin_ca.map(ToOwned::to_owned).or_else(|| self.ca.clone());
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
