//! A run's certificates: a throwaway certificate authority and one leaf
//! for the target's addresses, made once per run into a private folder,
//! handed to targets as `TLS_CERT`/`TLS_KEY` and to clients as the only
//! authority they trust.

use std::fs::{DirBuilder, OpenOptions};
use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose, SanType};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, pem::PemObject as _};

use crate::error::TargetError;

/// The file names inside the certificates' folder.
pub const CA_FILE: &str = "ca.pem";
pub const CERT_FILE: &str = "cert.pem";
pub const KEY_FILE: &str = "key.pem";

/// Where a run's certificate files are: what a target is started with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    /// The authority's certificate (PEM): what clients trust.
    pub ca: PathBuf,
    /// The leaf's certificate (PEM): `TLS_CERT`, `{tls_cert}`.
    pub cert: PathBuf,
    /// The leaf's private key (PKCS#8 PEM): `TLS_KEY`, `{tls_key}`.
    pub key: PathBuf,
}

impl TlsFiles {
    /// A client configuration that trusts only this run's authority and
    /// offers `alpn`, with the `ring` provider chosen explicitly.
    ///
    /// # Errors
    /// The authority's file is unreadable or not a certificate.
    pub fn client_config(&self, alpn: &[&[u8]]) -> Result<Arc<rustls::ClientConfig>, TargetError> {
        client_config(&self.ca, alpn)
    }

    /// The leaf certificate, DER-encoded: what a target must serve.
    ///
    /// # Errors
    /// The file is unreadable or holds no certificate.
    pub fn leaf_der(&self) -> Result<CertificateDer<'static>, TargetError> {
        first_certificate(&self.cert)
    }
}

/// The certificates of one run. The folder (mode 0700, files 0600) is
/// removed when this is dropped.
#[derive(Debug)]
pub struct RunCertificates {
    dir: PathBuf,
    files: TlsFiles,
}

impl RunCertificates {
    /// Makes a new authority and a leaf for `localhost`, `127.0.0.1`, `::1`
    /// and every address of `listen`, into `dir` (created; it must not exist
    /// or be empty).
    ///
    /// # Errors
    /// The folder cannot be made private or written, or generation failed.
    pub fn create(dir: &Path, listen: &[IpAddr]) -> Result<Self, TargetError> {
        Self::create_naming(dir, listen, &[])
    }

    /// As [`Self::create`], the leaf naming `names` too: the addresses
    /// clients on other hosts reach the target by, each an IP address or a
    /// DNS name (`[hosts] server_address`).
    ///
    /// # Errors
    /// As [`Self::create`], and a name that is neither an address nor a
    /// DNS name.
    pub fn create_naming(
        dir: &Path,
        listen: &[IpAddr],
        names: &[String],
    ) -> Result<Self, TargetError> {
        Self::write_into(dir, &pem(listen, names)?)
    }

    /// A throwaway authority and a leaf for loopback and `names` (each an IP
    /// address or a DNS name), as PEM text written nowhere: for
    /// certificates that travel elsewhere, such as a Kubernetes Secret.
    /// In order: the authority's certificate, the leaf's, the leaf's key.
    ///
    /// # Errors
    /// A name that is neither an address nor a DNS name, or generation failed.
    pub fn pem_naming(names: &[String]) -> Result<(String, String, String), TargetError> {
        pem(&[], names)
    }

    /// Certificates made elsewhere (by the coordinator of a run on hosts),
    /// as PEM text: the authority's, the leaf's and the leaf's key,
    /// written into `dir` as [`Self::create`] writes its own.
    ///
    /// # Errors
    /// The folder cannot be made private or written.
    pub fn from_pem(dir: &Path, ca: &str, cert: &str, key: &str) -> Result<Self, TargetError> {
        Self::write_into(dir, &(ca.to_owned(), cert.to_owned(), key.to_owned()))
    }

    fn write_into(
        dir: &Path,
        (ca_pem, cert_pem, key_pem): &(String, String, String),
    ) -> Result<Self, TargetError> {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| TargetError::io("create", dir, e))?;
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .map_err(|e| TargetError::io("restrict", dir, e))?;
        let files = TlsFiles {
            ca: dir.join(CA_FILE),
            cert: dir.join(CERT_FILE),
            key: dir.join(KEY_FILE),
        };
        write_private(&files.ca, ca_pem)?;
        write_private(&files.cert, cert_pem)?;
        write_private(&files.key, key_pem)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            files,
        })
    }

    /// The files a target and its clients use.
    #[must_use]
    pub fn files(&self) -> &TlsFiles {
        &self.files
    }

    /// The folder that holds them.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for RunCertificates {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// [`generate`], its failure said with the names asked for.
fn pem(listen: &[IpAddr], names: &[String]) -> Result<(String, String, String), TargetError> {
    generate(listen, names).map_err(|e| TargetError::Config {
        message: format!("cannot make certificates for {names:?}: {e}"),
    })
}

/// The authority, the leaf and the leaf's key, as PEM text; the leaf
/// names loopback, `listen` and `names` (addresses or DNS names).
fn generate(listen: &[IpAddr], names: &[String]) -> Result<(String, String, String), rcgen::Error> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "corobench run authority");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_key = KeyPair::generate()?;
    let ca = ca_params.self_signed(&ca_key)?;

    let mut leaf_params = CertificateParams::new(vec!["localhost".to_owned()])?;
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "corobench target");
    let mut addresses = vec![
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(Ipv6Addr::LOCALHOST),
    ];
    let mut dns = Vec::new();
    let named = names.iter().map(|name| {
        let bare = name.trim_start_matches('[').trim_end_matches(']');
        bare.parse::<IpAddr>().map_err(|_| name)
    });
    for name in named {
        match name {
            Ok(ip) if !addresses.contains(&ip) && !ip.is_unspecified() => addresses.push(ip),
            Ok(_) => {}
            Err(name) if name != "localhost" && !dns.contains(name) => dns.push(name.clone()),
            Err(_) => {}
        }
    }
    for ip in listen {
        if !addresses.contains(ip) && !ip.is_unspecified() {
            addresses.push(*ip);
        }
    }
    leaf_params
        .subject_alt_names
        .extend(addresses.into_iter().map(SanType::IpAddress));
    for name in dns {
        let name = name.try_into()?;
        leaf_params.subject_alt_names.push(SanType::DnsName(name));
    }
    leaf_params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    leaf_params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_key = KeyPair::generate()?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf = leaf_params.signed_by(&leaf_key, &issuer)?;
    Ok((ca.pem(), leaf.pem(), leaf_key.serialize_pem()))
}

/// Writes `text` to a new file only its owner can read.
fn write_private(path: &Path, text: &str) -> Result<(), TargetError> {
    let _ = std::fs::remove_file(path);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| TargetError::io("create", path, e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| TargetError::io("write", path, e))
}

/// The first certificate of a PEM file.
fn first_certificate(path: &Path) -> Result<CertificateDer<'static>, TargetError> {
    let text = std::fs::read(path).map_err(|e| TargetError::io("read", path, e))?;
    CertificateDer::pem_slice_iter(&text)
        .next()
        .and_then(Result::ok)
        .ok_or_else(|| TargetError::Config {
            message: format!("{} holds no PEM certificate", path.display()),
        })
}

/// A client configuration that trusts only the authority in `ca` (PEM).
///
/// # Errors
/// The file is unreadable or holds no usable certificate.
pub fn client_config(ca: &Path, alpn: &[&[u8]]) -> Result<Arc<rustls::ClientConfig>, TargetError> {
    let mut roots = rustls::RootCertStore::empty();
    let text = std::fs::read(ca).map_err(|e| TargetError::io("read", ca, e))?;
    for certificate in CertificateDer::pem_slice_iter(&text) {
        let certificate = certificate.map_err(|e| TargetError::Config {
            message: format!("{}: not a PEM certificate: {e}", ca.display()),
        })?;
        roots.add(certificate).map_err(|e| TargetError::Config {
            message: format!("{}: not a usable authority: {e}", ca.display()),
        })?;
    }
    if roots.is_empty() {
        return Err(TargetError::Config {
            message: format!("{} holds no PEM certificate", ca.display()),
        });
    }
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TargetError::Config {
            message: format!("TLS client configuration: {e}"),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// The crypto provider every TLS configuration here uses, named explicitly
/// so that no process-wide default is needed.
#[must_use]
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The name a client checks the certificate against: the address itself
/// (the leaf carries IP SANs for every address a target listens on).
#[must_use]
pub fn server_name(ip: IpAddr) -> ServerName<'static> {
    ServerName::IpAddress(ip.into())
}

/// A server configuration from a certificate chain and key in PEM files:
/// for tests that stand in for a target.
///
/// # Errors
/// A file is unreadable, or the key does not fit the certificate.
pub fn server_config(
    files: &TlsFiles,
    alpn: &[&[u8]],
) -> Result<Arc<rustls::ServerConfig>, TargetError> {
    let read = |path: &Path| std::fs::read(path).map_err(|e| TargetError::io("read", path, e));
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&read(&files.cert)?)
        .collect::<Result<_, _>>()
        .map_err(|e| TargetError::Config {
            message: format!("{}: {e}", files.cert.display()),
        })?;
    let key =
        PrivateKeyDer::from_pem_slice(&read(&files.key)?).map_err(|e| TargetError::Config {
            message: format!("{}: {e}", files.key.display()),
        })?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(chain, key))
        .map_err(|e| TargetError::Config {
            message: format!("TLS server configuration: {e}"),
        })?;
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::client::danger::ServerCertVerifier as _;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn the_folder_and_files_are_private_and_go_with_the_certificates() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("tls");
        let certificates = RunCertificates::create(&dir, &["127.0.0.2".parse().unwrap()]).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        let files = certificates.files().clone();
        for file in [&files.ca, &files.cert, &files.key] {
            assert_eq!(mode(file), 0o600, "{}", file.display());
        }
        let key = std::fs::read_to_string(&files.key).unwrap();
        assert!(
            key.starts_with("-----BEGIN PRIVATE KEY-----"),
            "PKCS#8: {key}"
        );
        drop(certificates);
        assert!(!dir.exists());
    }

    /// Whether the leaf of `files` is good for `name`, by the authority of
    /// `files`.
    fn good_for(files: &TlsFiles, name: &str) -> bool {
        let leaf = files.leaf_der().unwrap();
        let mut roots = rustls::RootCertStore::empty();
        let ca = std::fs::read(&files.ca).unwrap();
        roots.add_parsable_certificates(CertificateDer::pem_slice_iter(&ca).map(Result::unwrap));
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider(),
        )
        .build()
        .unwrap();
        let now = rustls::pki_types::UnixTime::now();
        let name = ServerName::try_from(name.to_owned()).unwrap();
        verifier
            .verify_server_cert(&leaf, &[], &name, &[], now)
            .is_ok()
    }

    #[test]
    fn the_leaf_is_signed_by_the_authority_for_every_address() {
        let root = tempfile::tempdir().unwrap();
        let certificates =
            RunCertificates::create(&root.path().join("tls"), &["127.0.0.2".parse().unwrap()])
                .unwrap();
        let files = certificates.files();
        files.client_config(&[b"http/1.1"]).unwrap();
        for name in ["127.0.0.1", "::1", "127.0.0.2", "localhost"] {
            assert!(good_for(files, name), "{name}");
        }
        assert!(!good_for(files, "127.0.0.3"));
    }

    /// A run on hosts: the leaf names the address generators reach the
    /// server by, an IP address or a DNS name, and the server host writes
    /// the same certificates from their text.
    #[test]
    fn the_leaf_names_the_server_hosts_address_and_travels_as_text() {
        let root = tempfile::tempdir().unwrap();
        let names = ["10.231.0.1".to_owned(), "bench-server".to_owned()];
        let made = RunCertificates::create_naming(&root.path().join("made"), &[], &names).unwrap();
        for name in ["10.231.0.1", "bench-server", "127.0.0.1"] {
            assert!(good_for(made.files(), name), "{name}");
        }
        assert!(!good_for(made.files(), "10.231.0.2"));
        let text = |p: &Path| std::fs::read_to_string(p).unwrap();
        let files = made.files();
        let copy = RunCertificates::from_pem(
            &root.path().join("copy"),
            &text(&files.ca),
            &text(&files.cert),
            &text(&files.key),
        )
        .unwrap();
        assert_eq!(text(&copy.files().key), text(&files.key));
        assert!(good_for(copy.files(), "bench-server"));
        let mode = std::fs::metadata(&copy.files().key)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    /// A Kubernetes layout's certificates, made as text for its Secret:
    /// good for the Service's names and loopback, for nothing else.
    #[test]
    fn certificates_made_as_text_name_what_they_were_asked_for() {
        let names = [
            "corobench-target".to_owned(),
            "corobench-target.bench.svc".to_owned(),
        ];
        let (ca, cert, key) = RunCertificates::pem_naming(&names).unwrap();
        assert!(key.starts_with("-----BEGIN PRIVATE KEY-----"), "{key}");
        let root = tempfile::tempdir().unwrap();
        let written =
            RunCertificates::from_pem(&root.path().join("k8s"), &ca, &cert, &key).unwrap();
        for name in [
            "corobench-target",
            "corobench-target.bench.svc",
            "127.0.0.1",
            "localhost",
        ] {
            assert!(good_for(written.files(), name), "{name}");
        }
        assert!(!good_for(written.files(), "corobench-target.other.svc"));
        let error = RunCertificates::pem_naming(&["bénch".to_owned()]).unwrap_err();
        assert!(error.to_string().contains("bénch"), "{error}");
    }
}
