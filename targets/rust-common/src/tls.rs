//! The rustls server configuration every Rust target serves HTTPS with:
//! the certificate chain and key of `TLS_CERT` and `TLS_KEY`, ALPN as
//! `HTTP_PROTOCOL` asks, TLS 1.2 and 1.3, and session resumption by ticket
//! as well as by id (what production servers such as Go's and nginx's do by
//! default). Each target's runtime brings its own acceptor around it.

use std::path::Path;
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::crypto::aws_lc_rs;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::env::EnvError;
use crate::protocol::{HttpProtocol, TlsFiles};

/// Reads the PEM files and builds the configuration; an error names the
/// variable and the file, and says what is wrong with it.
pub fn server_config(files: &TlsFiles, http: HttpProtocol) -> Result<Arc<ServerConfig>, EnvError> {
    let chain = read_chain(&files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| pem_error("TLS_KEY", &files.key, "private key", &e))?;
    let provider = Arc::new(aws_lc_rs::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| EnvError(format!("the TLS provider refuses TLS 1.2 and 1.3: {e}")))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| {
            EnvError(format!(
                "TLS_KEY {} does not fit the certificate in TLS_CERT {}: {e}",
                files.key.display(),
                files.cert.display()
            ))
        })?;
    config.alpn_protocols = http.alpn_ids();
    config.ticketer = aws_lc_rs::Ticketer::new()
        .map_err(|e| EnvError(format!("cannot make a TLS session ticket key: {e}")))?;
    Ok(Arc::new(config))
}

fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, EnvError> {
    let chain = CertificateDer::pem_file_iter(path)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|e| pem_error("TLS_CERT", path, "certificate", &e))?;
    if chain.is_empty() {
        return Err(EnvError(format!(
            "TLS_CERT {} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            path.display()
        )));
    }
    Ok(chain)
}

fn pem_error(
    variable: &str,
    path: &Path,
    what: &str,
    error: &rustls::pki_types::pem::Error,
) -> EnvError {
    use rustls::pki_types::pem::Error;
    let why = match error {
        Error::Io(io) => format!("cannot be read: {io}"),
        Error::NoItemsFound => format!("holds no PEM {what}"),
        other => format!("is not a PEM {what}: {other:?}"),
    };
    EnvError(format!("{variable} {} {why}", path.display()))
}

#[cfg(all(test, feature = "testing-tls"))]
mod tests {
    use super::*;
    use crate::testing_tls::TestCerts;

    #[test]
    fn the_run_certificates_make_a_configuration_with_alpn() {
        let certs = TestCerts::new();
        let config = server_config(&certs.files(), HttpProtocol::H2).expect("config");
        assert_eq!(config.alpn_protocols, HttpProtocol::H2.alpn_ids());
        assert!(config.ticketer.enabled());
    }

    #[test]
    fn missing_empty_and_mismatched_files_are_named() {
        let certs = TestCerts::new();
        let missing = TlsFiles {
            cert: "/nonexistent/cert.pem".into(),
            key: certs.files().key,
        };
        let error = server_config(&missing, HttpProtocol::Http1).unwrap_err();
        assert!(
            error
                .0
                .starts_with("TLS_CERT /nonexistent/cert.pem cannot be read"),
            "{error}"
        );
        let swapped = TlsFiles {
            cert: certs.files().key,
            key: certs.files().cert,
        };
        let error = server_config(&swapped, HttpProtocol::Http1).unwrap_err();
        assert!(error.0.contains("holds no PEM certificate"), "{error}");
        let other = TestCerts::new();
        let mismatched = TlsFiles {
            cert: certs.files().cert,
            key: other.files().key,
        };
        let error = server_config(&mismatched, HttpProtocol::Http1).unwrap_err();
        assert!(error.0.contains("does not fit the certificate"), "{error}");
    }
}
