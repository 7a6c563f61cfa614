//! TLS for the targets' integration tests: a throwaway CA and a leaf for
//! 127.0.0.1 written as the PEM files `TLS_CERT` and `TLS_KEY` name, and a
//! blocking rustls client that the raw HTTP/1.1 [`TestClient`] runs over.

use std::io::Read as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use crate::protocol::TlsFiles;
use crate::testing::{TestClient, connect_tcp};

/// A CA and a leaf it signed for `127.0.0.1` and `localhost`, the leaf's
/// chain and key written into a private temporary folder.
#[derive(Debug)]
pub struct TestCerts {
    dir: PathBuf,
    ca: CertificateDer<'static>,
    leaf: CertificateDer<'static>,
}

impl TestCerts {
    pub fn new() -> Self {
        let ca_key = KeyPair::generate().expect("CA key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "rust-common test CA");
        let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf_key = KeyPair::generate().expect("leaf key");
        let leaf_params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .expect("leaf params");
        let leaf = leaf_params
            .signed_by(&leaf_key, &issuer)
            .expect("leaf certificate");
        let dir = tempfile::tempdir().expect("temp dir").keep();
        std::fs::write(dir.join("cert.pem"), leaf.pem() + &ca.pem()).expect("write cert.pem");
        std::fs::write(dir.join("key.pem"), leaf_key.serialize_pem()).expect("write key.pem");
        Self {
            dir,
            ca: ca.der().clone(),
            leaf: leaf.der().clone(),
        }
    }

    /// The files to hand the server as `TLS_CERT` and `TLS_KEY`.
    pub fn files(&self) -> TlsFiles {
        TlsFiles {
            cert: self.dir.join("cert.pem"),
            key: self.dir.join("key.pem"),
        }
    }

    /// The leaf certificate the server must present.
    pub fn leaf(&self) -> &CertificateDer<'static> {
        &self.leaf
    }

    /// A client that trusts only this CA and offers `alpn`.
    pub fn client_config(&self, alpn: &[&[u8]]) -> Arc<ClientConfig> {
        let mut roots = RootCertStore::empty();
        roots.add(self.ca.clone()).expect("trust the test CA");
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|id| id.to_vec()).collect();
        Arc::new(config)
    }
}

impl Default for TestCerts {
    fn default() -> Self {
        Self::new()
    }
}

/// A finished handshake: what was agreed, and the client to talk over it.
#[derive(Debug)]
pub struct TlsSession {
    pub client: TestClient,
    /// The ALPN protocol the server chose, if any.
    pub alpn: Option<Vec<u8>>,
    /// The certificate the server presented first (its leaf).
    pub leaf: Option<CertificateDer<'static>>,
}

/// Connects to `address`, completes a TLS handshake for `127.0.0.1` that
/// trusts only `certs`' CA, offering `alpn`.
pub fn connect_tls(address: SocketAddr, certs: &TestCerts, alpn: &[&[u8]]) -> TlsSession {
    let mut tcp = connect_tcp(address);
    let name = ServerName::try_from("127.0.0.1").expect("server name");
    let mut connection =
        ClientConnection::new(certs.client_config(alpn), name).expect("client connection");
    while connection.is_handshaking() {
        connection.complete_io(&mut tcp).expect("TLS handshake");
    }
    let alpn = connection.alpn_protocol().map(<[u8]>::to_vec);
    let leaf = connection
        .peer_certificates()
        .and_then(|chain| chain.first())
        .map(|cert| cert.clone().into_owned());
    TlsSession {
        client: TestClient::over(StreamOwned::new(connection, tcp)),
        alpn,
        leaf,
    }
}

/// Sends a cleartext HTTP/1.1 request to a TLS port and returns every byte
/// that came back until the server closed: never an HTTP answer.
pub fn cleartext_reply(address: SocketAddr) -> Vec<u8> {
    use std::io::Write as _;
    let mut tcp = connect_tcp(address);
    tcp.write_all(b"GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("send a cleartext request");
    let mut reply = Vec::new();
    // A reset instead of a close is fine: the bytes read so far stay.
    let _ = tcp.read_to_end(&mut reply);
    reply
}
