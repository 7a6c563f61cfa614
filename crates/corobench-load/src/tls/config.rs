//! The rustls client configuration a run's options ask for.
//!
//! Certificates are checked against Mozilla's roots as compiled into
//! `webpki-roots`, not the machine's store: the verdict is then the same on
//! every generator host (a minimal container has no store at all), and a
//! private CA is trusted explicitly with a CA file.

use std::sync::Arc;

use rustls::client::Resumption;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use rustls::{ClientConfig, RootCertStore, SupportedProtocolVersion};

use super::insecure::SignaturesOnly;
use super::{TlsError, TlsOptions, TlsProvider, TlsVersions};

/// TLS sessions each generator thread remembers for resumption: enough for
/// every connection of a busy thread to find one.
const SESSIONS_PER_THREAD: usize = 4096;

/// The configuration `options` ask for (its session cache is replaced per thread).
pub(super) fn client_config(options: &TlsOptions) -> Result<ClientConfig, TlsError> {
    let provider = Arc::new(provider(options.provider, &options.ciphers)?);
    let versions = protocol_versions(options.versions);
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(versions)
        .map_err(|_| TlsError::NoCipherForVersions {
            chosen: options.ciphers.join(","),
            versions: versions_words(options.versions).to_owned(),
        })?;
    let mut config = if options.verify {
        builder.with_root_certificates(roots(options)?)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(SignaturesOnly::new(&provider)))
    }
    .with_no_client_auth();
    config.alpn_protocols = options.alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    config.resumption = resumption(options.resumption);
    config.enable_secret_extraction = options.ktls;
    Ok(config)
}

/// A fresh session cache, or none.
pub(super) fn resumption(on: bool) -> Resumption {
    if on {
        Resumption::in_memory_sessions(SESSIONS_PER_THREAD)
    } else {
        Resumption::disabled()
    }
}

/// The chosen provider, offering only the named cipher suites when some are named.
fn provider(choice: TlsProvider, ciphers: &[String]) -> Result<CryptoProvider, TlsError> {
    let mut provider = base_provider(choice)?;
    if ciphers.is_empty() {
        return Ok(provider);
    }
    let all = all_suites(choice);
    let mut chosen = Vec::with_capacity(ciphers.len());
    for name in ciphers {
        let suite = all
            .iter()
            .find(|s| format!("{:?}", s.suite()).eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| TlsError::UnknownCipher {
                name: name.clone(),
                provider: choice.name(),
                known: all
                    .iter()
                    .map(|s| format!("{:?}", s.suite()))
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        chosen.push(*suite);
    }
    provider.cipher_suites = chosen;
    Ok(provider)
}

fn base_provider(choice: TlsProvider) -> Result<CryptoProvider, TlsError> {
    match choice {
        #[cfg(feature = "aws-lc-rs")]
        TlsProvider::AwsLcRs => Ok(rustls::crypto::aws_lc_rs::default_provider()),
        #[cfg(feature = "ring")]
        TlsProvider::Ring => Ok(rustls::crypto::ring::default_provider()),
        #[allow(unreachable_patterns)]
        other => Err(TlsError::ProviderNotBuilt(other.name())),
    }
}

fn all_suites(choice: TlsProvider) -> &'static [rustls::SupportedCipherSuite] {
    match choice {
        #[cfg(feature = "aws-lc-rs")]
        TlsProvider::AwsLcRs => rustls::crypto::aws_lc_rs::ALL_CIPHER_SUITES,
        #[cfg(feature = "ring")]
        TlsProvider::Ring => rustls::crypto::ring::ALL_CIPHER_SUITES,
        #[allow(unreachable_patterns)]
        _ => &[],
    }
}

fn protocol_versions(versions: TlsVersions) -> &'static [&'static SupportedProtocolVersion] {
    static ANY: [&SupportedProtocolVersion; 2] = [&rustls::version::TLS13, &rustls::version::TLS12];
    static TLS12: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
    static TLS13: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
    match versions {
        TlsVersions::Any => &ANY,
        TlsVersions::Tls12 => &TLS12,
        TlsVersions::Tls13 => &TLS13,
    }
}

fn versions_words(versions: TlsVersions) -> &'static str {
    match versions {
        TlsVersions::Any => "TLS 1.2 or 1.3",
        TlsVersions::Tls12 => "TLS 1.2",
        TlsVersions::Tls13 => "TLS 1.3",
    }
}

/// Mozilla's roots, plus the CA file's certificates.
fn roots(options: &TlsOptions) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(path) = &options.ca_file {
        let pem = std::fs::read(path).map_err(|source| TlsError::CaFileUnreadable {
            path: path.clone(),
            source,
        })?;
        let invalid = |why: String| TlsError::CaFileInvalid {
            path: path.clone(),
            why,
        };
        let certificates: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<_, _>>()
            .map_err(|e| invalid(format!("it is not valid PEM ({e})")))?;
        if certificates.is_empty() {
            return Err(TlsError::CaFileNotPem { path: path.clone() });
        }
        for certificate in certificates {
            roots.add(certificate).map_err(|e| {
                invalid(format!(
                    "a certificate in it cannot be a trust anchor ({e})"
                ))
            })?;
        }
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn options(edit: impl FnOnce(&mut TlsOptions)) -> TlsOptions {
        let mut options = TlsOptions::default();
        edit(&mut options);
        options
    }

    #[test]
    fn cipher_names_are_checked_against_the_provider() {
        let named = options(|o| o.ciphers = vec!["tls13_aes_128_gcm_sha256".to_owned()]);
        assert_eq!(
            client_config(&named)
                .unwrap()
                .crypto_provider()
                .cipher_suites
                .len(),
            1
        );
        let unknown = options(|o| o.ciphers = vec!["RC4_MD5".to_owned()]);
        let error = client_config(&unknown).unwrap_err().to_string();
        assert!(
            error.contains("RC4_MD5") && error.contains("TLS13_AES_128_GCM_SHA256"),
            "{error}"
        );
        let impossible = options(|o| {
            o.ciphers = vec!["TLS13_AES_128_GCM_SHA256".to_owned()];
            o.versions = TlsVersions::Tls12;
        });
        let error = client_config(&impossible).unwrap_err().to_string();
        assert!(error.contains("TLS 1.2"), "{error}");
    }

    #[test]
    fn a_ca_file_must_exist_and_hold_pem_certificates() {
        let missing = options(|o| o.ca_file = Some("/nonexistent/ca.pem".into()));
        let error = client_config(&missing).unwrap_err().to_string();
        assert!(
            error.contains("cannot read the CA file /nonexistent/ca.pem"),
            "{error}"
        );
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(b"not a certificate\n").unwrap();
        let not_pem = options(|o| o.ca_file = Some(file.path().to_owned()));
        let error = client_config(&not_pem).unwrap_err().to_string();
        assert!(error.contains("holds no PEM certificate"), "{error}");
        let mut broken = tempfile::NamedTempFile::new().unwrap();
        broken
            .write_all(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
            .unwrap();
        let invalid = options(|o| o.ca_file = Some(broken.path().to_owned()));
        let error = client_config(&invalid).unwrap_err().to_string();
        assert!(error.contains("cannot be a trust anchor"), "{error}");
    }

    #[test]
    fn alpn_and_resumption_follow_the_options() {
        let config = client_config(&options(|o| {
            o.alpn = vec!["h2".to_owned(), "http/1.1".to_owned()];
            o.ktls = true;
        }))
        .unwrap();
        assert_eq!(
            config.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        assert!(config.enable_secret_extraction);
    }
}
