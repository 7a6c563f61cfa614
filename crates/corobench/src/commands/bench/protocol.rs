//! What the quick form's servers are spoken to in: `--tls`, `--h2`,
//! `--h2c` and `-m` become the spec's protocol keys (written by
//! `corobench_spec::QuickForm`); each server is declared to serve that
//! protocol (it is the user's word), and one already running at an
//! `https://` URL is spoken to over TLS, trusting `--ca` or nothing
//! (`--insecure`). A quick form the spec refuses is told here as the flags
//! that caused it.

use std::path::PathBuf;

use clap::Args;

use corobench_spec::{QuickFormError, QuickProtocol, Sampling};

use crate::exit;

/// The protocol flags of `corobench bench`.
#[derive(Debug, Default, Args)]
pub struct ProtocolFlags {
    /// Speak HTTP/1.1 over TLS: each server is started with a certificate
    /// of the run's own authority (`{tls_cert}` and `{tls_key}` in its
    /// command, `TLS_CERT` and `TLS_KEY` in its environment) and must serve
    /// HTTPS on its port; the generator trusts that authority alone. Implied
    /// by an https:// server
    #[arg(long, conflicts_with_all = ["h2", "h2c"])]
    pub tls: bool,

    /// Speak HTTP/2 over TLS (ALPN h2), with the run's certificate as --tls
    #[arg(long, conflicts_with = "h2c")]
    pub h2: bool,

    /// Speak cleartext HTTP/2 by prior knowledge
    #[arg(long)]
    pub h2c: bool,

    /// HTTP/2 streams open at once on each connection (with --h2 or --h2c)
    #[arg(short = 'm', long = "streams", value_name = "STREAMS")]
    pub streams: Option<u32>,

    /// A full TLS handshake on every new connection instead of resuming a
    /// session (with --no-keepalive, every request pays one)
    #[arg(long)]
    pub no_tls_resume: bool,

    /// For servers already running at an https:// URL: trust this CA's PEM
    /// file besides the built-in roots
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,

    /// For servers already running at an https:// URL: do not check their
    /// certificate (the handshake costs the same)
    #[arg(long, conflicts_with = "ca")]
    pub insecure: bool,
}

impl From<&ProtocolFlags> for QuickProtocol {
    fn from(flags: &ProtocolFlags) -> Self {
        Self {
            tls: flags.tls,
            h2: flags.h2,
            h2c: flags.h2c,
            streams: flags.streams,
            no_tls_resume: flags.no_tls_resume,
            ca: flags.ca.clone(),
            insecure: flags.insecure,
        }
    }
}

/// `error` told as the flags that caused it.
pub(super) fn told(error: &QuickFormError) -> anyhow::Error {
    let message = match error {
        QuickFormError::WhichServer { sampling, .. }
        | QuickFormError::NotRunning { sampling, .. } => {
            format!("{} {error}", sampling_flag(*sampling))
        }
        QuickFormError::NotPid { .. } => format!("--pid {error}"),
        QuickFormError::MixedSchemes { .. } => format!("--server: {error}"),
        QuickFormError::TlsToCleartext { h2, .. } => {
            let flag = if *h2 { "--h2" } else { "--tls" };
            format!("{flag}: {error} (without {flag})")
        }
        QuickFormError::CleartextToTls { .. } => format!("--h2c: {error} (--h2)"),
        QuickFormError::TrustWithoutTls => format!("--ca and --insecure: {error}"),
        QuickFormError::StreamsWithoutHttp2 => format!("-m/--streams: {error} (--h2 or --h2c)"),
    };
    exit::usage(message)
}

fn sampling_flag(sampling: Sampling) -> &'static str {
    match sampling {
        Sampling::Pid => "--pid",
        Sampling::Process => "--process",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contradictions_name_the_flag() {
        let cases = [
            (
                QuickFormError::TlsToCleartext {
                    h2: false,
                    plain: vec!["live".to_owned()],
                },
                "--tls: live already running at http://",
            ),
            (
                QuickFormError::CleartextToTls {
                    https: vec!["live".to_owned()],
                },
                "--h2c: live already running at https://",
            ),
            (
                QuickFormError::StreamsWithoutHttp2,
                "-m/--streams: several streams per connection are HTTP/2's",
            ),
            (QuickFormError::TrustWithoutTls, "--ca and --insecure"),
            (
                QuickFormError::MixedSchemes {
                    https: vec!["a".to_owned()],
                    plain: vec!["b".to_owned()],
                },
                "--server: a at https:// and b at http:// would be measured in different \
                 protocols",
            ),
            (
                QuickFormError::NotRunning {
                    sampling: Sampling::Process,
                    given: "api=nginx".to_owned(),
                    name: "api".to_owned(),
                },
                "--process api=nginx: api is not a server given as NAME=http://",
            ),
        ];
        for (error, says) in cases {
            let told = told(&error).to_string();
            assert!(told.contains(says), "{told}");
        }
    }
}
