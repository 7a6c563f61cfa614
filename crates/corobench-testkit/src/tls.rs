//! TLS for the test servers: a throwaway CA and a leaf certificate it
//! signed for `127.0.0.1`, `::1` and `localhost` (or, to be refused, an
//! expired one, one for another name, a self-signed one), and the rustls
//! server configuration that serves them.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, date_time_ymd};
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Which certificate a TLS test server presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CertKind {
    /// Signed by the test CA, valid now, for 127.0.0.1, ::1 and localhost.
    #[default]
    Valid,
    /// Signed by the test CA, but its validity ended in 2001.
    Expired,
    /// Signed by the test CA, for `wrong.example` only.
    WrongName,
    /// Signed by itself: no CA vouches for it.
    SelfSigned,
}

/// The TLS behaviour of a test server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsKnobs {
    pub certificate: CertKind,
    /// Close every Nth connection (1-based: the Nth, 2Nth, ...) once its
    /// ClientHello arrived, without answering: a server dropping
    /// connections mid-handshake.
    pub drop_handshake_every: Option<u32>,
    /// Answer what arrives with a plaintext HTTP `400` and close, as a
    /// cleartext server answers a TLS greeting.
    pub plaintext_answer: bool,
    /// The ALPN protocols served; empty: ALPN is ignored. `["h2"]`
    /// refuses a client that offers only `http/1.1`.
    pub alpn: Vec<String>,
    /// Serve only this TLS version (`12` or `13`); `None`: both.
    pub only_version: Option<u8>,
}

/// A CA and the certificate a server presents, in PEM.
#[derive(Debug, Clone)]
pub struct TestCerts {
    ca_pem: String,
    chain_pem: String,
    key_pem: String,
}

impl TestCerts {
    /// Makes a fresh CA and a certificate of `kind`.
    ///
    /// # Panics
    /// When rcgen cannot make a key or sign (never with its defaults).
    #[must_use]
    pub fn new(kind: CertKind) -> Self {
        let ca_key = KeyPair::generate().expect("a key pair");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "corobench test CA");
        let ca = ca_params.self_signed(&ca_key).expect("a CA certificate");
        let names: Vec<String> = match kind {
            CertKind::WrongName => vec!["wrong.example".into()],
            _ => vec!["127.0.0.1".into(), "::1".into(), "localhost".into()],
        };
        let mut params = CertificateParams::new(names).expect("leaf params");
        params
            .distinguished_name
            .push(DnType::CommonName, "corobench test server");
        if kind == CertKind::Expired {
            params.not_before = date_time_ymd(2000, 1, 1);
            params.not_after = date_time_ymd(2001, 1, 1);
        }
        let key = KeyPair::generate().expect("a key pair");
        let leaf = if kind == CertKind::SelfSigned {
            params.self_signed(&key)
        } else {
            params.signed_by(&key, &Issuer::new(ca_params, ca_key))
        }
        .expect("a leaf certificate");
        Self {
            ca_pem: ca.pem(),
            chain_pem: leaf.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    /// The CA's certificate, for clients to trust.
    #[must_use]
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The server's certificate.
    #[must_use]
    pub fn cert_pem(&self) -> &str {
        &self.chain_pem
    }

    /// The server's private key.
    #[must_use]
    pub fn key_pem(&self) -> &str {
        &self.key_pem
    }

    /// Writes `ca.pem`, `cert.pem` and `key.pem` into `dir`; returns their paths.
    ///
    /// # Errors
    /// When a file cannot be written.
    pub fn write_to(&self, dir: &Path) -> io::Result<[PathBuf; 3]> {
        let paths = [
            dir.join("ca.pem"),
            dir.join("cert.pem"),
            dir.join("key.pem"),
        ];
        for (path, text) in paths
            .iter()
            .zip([&self.ca_pem, &self.chain_pem, &self.key_pem])
        {
            std::fs::write(path, text)?;
        }
        Ok(paths)
    }

    /// A server configuration presenting this certificate, as `knobs` ask.
    ///
    /// # Errors
    /// When rustls refuses the certificate or key.
    pub fn server_config(&self, knobs: &TlsKnobs) -> io::Result<Arc<ServerConfig>> {
        server_config(self.chain_pem.as_bytes(), self.key_pem.as_bytes(), knobs)
    }
}

/// A server configuration for a PEM certificate chain and key.
///
/// # Errors
/// A chain or key that is not PEM, or that rustls refuses.
pub fn server_config(
    chain_pem: &[u8],
    key_pem: &[u8],
    knobs: &TlsKnobs,
) -> io::Result<Arc<ServerConfig>> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(chain_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| invalid(format!("the certificate is not PEM: {e}")))?;
    if chain.is_empty() {
        return Err(invalid("the certificate file holds no certificate".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| invalid(format!("the key is not a PEM private key: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions: &[&rustls::SupportedProtocolVersion] = match knobs.only_version {
        Some(12) => &[&rustls::version::TLS12],
        Some(13) => &[&rustls::version::TLS13],
        _ => &[&rustls::version::TLS13, &rustls::version::TLS12],
    };
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .map_err(|e| invalid(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| invalid(format!("the certificate and key do not go together: {e}")))?;
    config.alpn_protocols = knobs.alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    Ok(Arc::new(config))
}

/// Whether the first certificate of `leaf_pem` is signed by the authority
/// in `ca_pem` and good now for `name` (a DNS name or an IP address), as a
/// client that trusts that authority alone checks it.
#[must_use]
pub fn certifies(ca_pem: &str, leaf_pem: &str, name: &str) -> bool {
    use rustls::client::danger::ServerCertVerifier as _;
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(
        CertificateDer::pem_slice_iter(ca_pem.as_bytes()).filter_map(Result::ok),
    );
    let Some(Ok(leaf)) = CertificateDer::pem_slice_iter(leaf_pem.as_bytes()).next() else {
        return false;
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let Ok(verifier) =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
    else {
        return false;
    };
    let Ok(name) = rustls::pki_types::ServerName::try_from(name.to_owned()) else {
        return false;
    };
    let now = rustls::pki_types::UnixTime::now();
    verifier
        .verify_server_cert(&leaf, &[], &name, &[], now)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leaf_is_certified_for_its_names_by_its_own_authority_alone() {
        let certs = TestCerts::new(CertKind::Valid);
        for name in ["127.0.0.1", "localhost"] {
            assert!(certifies(certs.ca_pem(), certs.cert_pem(), name), "{name}");
        }
        assert!(!certifies(
            certs.ca_pem(),
            certs.cert_pem(),
            "wrong.example"
        ));
        let other = TestCerts::new(CertKind::Valid);
        assert!(!certifies(other.ca_pem(), certs.cert_pem(), "localhost"));
        let expired = TestCerts::new(CertKind::Expired);
        assert!(!certifies(
            expired.ca_pem(),
            expired.cert_pem(),
            "localhost"
        ));
        assert!(!certifies(certs.ca_pem(), "not PEM", "localhost"));
    }
}
