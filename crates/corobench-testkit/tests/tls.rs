//! The contract server over HTTPS (`TLS_CERT`, `TLS_KEY`), as a target
//! process serves it, and the configuration mistakes it refuses.

mod common;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::{connect_when_ready, free_port};
use corobench_testkit::{CertKind, TestCerts, binary_path};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};

fn contract(port: u16, cert: &std::path::Path, key: &std::path::Path) -> Command {
    let mut command = Command::new(binary_path());
    command
        .env("PORT", port.to_string())
        .env("TLS_CERT", cert)
        .env("TLS_KEY", key)
        .env_remove("DATABASE_URL")
        .env_remove("TESTKIT_FAULTS");
    command
}

/// GETs `path` over TLS, trusting `ca_pem`; returns the ALPN agreed and
/// the whole response (the server closes after it).
fn tls_get(stream: TcpStream, ca_pem: &str, path: &str) -> (Option<Vec<u8>>, String) {
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(certificate.unwrap()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, stream);
    let request = format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    tls.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    let _ = tls.read_to_end(&mut response);
    let alpn = tls.conn.alpn_protocol().map(<[u8]>::to_vec);
    (alpn, String::from_utf8_lossy(&response).into_owned())
}

#[test]
fn with_tls_cert_and_key_it_serves_the_contract_over_https_only() {
    let dir = tempfile::tempdir().unwrap();
    let certs = TestCerts::new(CertKind::Valid);
    let [_, cert, key] = certs.write_to(dir.path()).unwrap();
    let port = free_port();
    let mut child = contract(port, &cert, &key)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stream = connect_when_ready(port, &mut child);
    let (alpn, response) = tls_get(stream, certs.ca_pem(), "/plaintext");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.ends_with("Hello, World!"), "{response}");
    assert_eq!(alpn.as_deref(), Some(&b"http/1.1"[..]));
    // Cleartext on the TLS port is refused with a TLS alert record.
    let mut plain = TcpStream::connect(("127.0.0.1", port)).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    plain
        .write_all(b"GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    let _ = plain.read_to_end(&mut answer);
    assert!(
        !answer.starts_with(b"HTTP/"),
        "cleartext was answered: {answer:?}"
    );
    assert_eq!(answer.first(), Some(&0x15), "an alert record: {answer:?}");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn key_files_that_are_missing_unreadable_or_mismatched_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let [_, cert, key] = TestCerts::new(CertKind::Valid)
        .write_to(dir.path())
        .unwrap();
    let other = tempfile::tempdir().unwrap();
    let [_, _, other_key] = TestCerts::new(CertKind::Valid)
        .write_to(other.path())
        .unwrap();
    let missing = dir.path().join("nope.pem");
    let run = |command: &mut Command| {
        let output = command.output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(contract(0, &cert, &key).env_remove("TLS_KEY"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("TLS_CERT and TLS_KEY go together"),
        "{stderr}"
    );
    let (code, stderr) = run(&mut contract(0, &missing, &key));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("TLS_CERT=") && stderr.contains("cannot read it"),
        "{stderr}"
    );
    let (code, stderr) = run(&mut contract(0, &cert, &other_key));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("do not go together"), "{stderr}");
    let (code, stderr) = run(&mut contract(0, &key, &cert));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("TLS_CERT="), "{stderr}");
}
