//! What the quick form's servers are spoken to in: `--tls`, `--h2`,
//! `--h2c` and `-m` become `[schedule]`'s protocol keys; each server is
//! declared to serve that protocol (it is the user's word), and one
//! already running at an `https://` URL is spoken to over TLS, trusting
//! `--ca` or nothing (`--insecure`).

use std::path::PathBuf;

use clap::Args;

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

impl ProtocolFlags {
    /// `[schedule]`'s protocol keys for servers of which `https` are at an
    /// `https://` URL and `plain` at an `http://` one.
    ///
    /// # Errors
    /// Flags that contradict the servers' URLs or each other.
    pub fn schedule_keys(&self, https: &[&str], plain: &[&str]) -> anyhow::Result<String> {
        self.refuse_contradictions(https, plain)?;
        let mut keys = String::new();
        if self.h2 || self.h2c {
            let name = if self.h2 { "h2" } else { "h2c" };
            keys.push_str(&format!("protocol = \"{name}\"\n"));
        } else if self.tls || !https.is_empty() {
            keys.push_str("tls = true\n");
        }
        if let Some(streams) = self.streams {
            keys.push_str(&format!("streams = {streams}\n"));
        }
        if self.no_tls_resume {
            keys.push_str("tls_resume = false\n");
        }
        Ok(keys)
    }

    /// What a server corobench starts declares it serves: the protocol the
    /// flags ask for.
    #[must_use]
    pub fn started_keys(&self, table: &str) -> String {
        match self.declared() {
            Some(name) => format!("\n[{table}.protocols]\n{name} = true\n"),
            None => String::new(),
        }
    }

    /// The keys of a server already running at `url`: how its certificate
    /// is trusted, and HTTP/2 declared when the flags ask for it.
    #[must_use]
    pub fn running_keys(&self, table: &str, url: &str) -> String {
        let mut keys = String::new();
        if url.starts_with("https://") {
            if let Some(ca) = &self.ca {
                keys.push_str(&format!(
                    "ca = {}\n",
                    super::spec::toml_string(&ca.display().to_string())
                ));
            }
            if self.insecure {
                keys.push_str("insecure = true\n");
            }
        }
        if self.h2 || self.h2c {
            keys.push_str(&self.started_keys(table));
        }
        keys
    }

    /// The `[protocols]` key of the protocol asked for; `None` for
    /// cleartext HTTP/1.1, which every server serves.
    fn declared(&self) -> Option<&'static str> {
        if self.h2 {
            Some("h2")
        } else if self.h2c {
            Some("h2c")
        } else if self.tls {
            Some("tls")
        } else {
            None
        }
    }

    fn refuse_contradictions(&self, https: &[&str], plain: &[&str]) -> anyhow::Result<()> {
        let over_tls = self.tls || self.h2;
        if !https.is_empty() && !plain.is_empty() {
            return Err(exit::usage(format!(
                "--server: {} at https:// and {} at http:// would be measured in different \
                 protocols, which are not compared: give them all one scheme",
                https.join(", "),
                plain.join(", ")
            )));
        }
        if over_tls && !plain.is_empty() {
            return Err(exit::usage(format!(
                "--{}: {} already running at http://, which speaks cleartext: give its \
                 https:// URL, or measure it without --{0}",
                if self.h2 { "h2" } else { "tls" },
                plain.join(", ")
            )));
        }
        if self.h2c && !https.is_empty() {
            return Err(exit::usage(format!(
                "--h2c: {} already running at https://, which speaks TLS: use --h2 for HTTP/2 \
                 over TLS",
                https.join(", ")
            )));
        }
        if (self.ca.is_some() || self.insecure) && https.is_empty() {
            return Err(exit::usage(
                "--ca and --insecure are for servers already running at an https:// URL; a \
                 server corobench starts gets the run's own certificate, which the generator \
                 trusts"
                    .to_owned(),
            ));
        }
        if self.streams.is_some_and(|m| m > 1) && !(self.h2 || self.h2c) {
            return Err(exit::usage(
                "-m/--streams is HTTP/2's: add --h2 or --h2c".to_owned(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_schedule_keys_and_declarations() {
        let h2 = ProtocolFlags {
            h2: true,
            streams: Some(10),
            ..ProtocolFlags::default()
        };
        assert_eq!(
            h2.schedule_keys(&[], &[]).unwrap(),
            "protocol = \"h2\"\nstreams = 10\n"
        );
        assert_eq!(
            h2.started_keys("servers.a"),
            "\n[servers.a.protocols]\nh2 = true\n"
        );
        let implied = ProtocolFlags::default();
        assert_eq!(
            implied.schedule_keys(&["live"], &[]).unwrap(),
            "tls = true\n"
        );
        let insecure = ProtocolFlags {
            insecure: true,
            ..ProtocolFlags::default()
        };
        assert_eq!(
            insecure.running_keys("servers.live", "https://127.0.0.1:8443"),
            "insecure = true\n"
        );
    }

    #[test]
    fn contradictions_name_the_flag() {
        let cases = [
            (
                ProtocolFlags {
                    tls: true,
                    ..ProtocolFlags::default()
                },
                vec![],
                vec!["live"],
                "--tls: live already running at http://",
            ),
            (
                ProtocolFlags {
                    h2c: true,
                    ..ProtocolFlags::default()
                },
                vec!["live"],
                vec![],
                "--h2c: live already running at https://",
            ),
            (
                ProtocolFlags {
                    streams: Some(4),
                    ..ProtocolFlags::default()
                },
                vec![],
                vec![],
                "-m/--streams is HTTP/2's",
            ),
            (
                ProtocolFlags {
                    insecure: true,
                    ..ProtocolFlags::default()
                },
                vec![],
                vec![],
                "--ca and --insecure",
            ),
            (
                ProtocolFlags::default(),
                vec!["a"],
                vec!["b"],
                "different protocols",
            ),
        ];
        for (flags, https, plain, says) in cases {
            let error = flags.schedule_keys(&https, &plain).unwrap_err().to_string();
            assert!(error.contains(says), "{error}");
        }
    }
}
