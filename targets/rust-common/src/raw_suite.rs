//! One contract-and-framing suite for every thread-per-core target: each
//! case talks raw bytes to a server already listening at `server`, in
//! cleartext or over TLS. A target runs them all with
//! [`raw_target_tests!`](crate::raw_target_tests), and the TLS cases with
//! [`raw_tls_target_tests!`](crate::raw_tls_target_tests).

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::thread::sleep;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::env::ServerEnv;
use crate::per_thread::Config;
use crate::testing::TestClient;
use crate::testing_tls::{TestCerts, cleartext_reply, connect_tls};

/// Pause between writes so that the server sees the pieces separately.
const PIECE_PAUSE: Duration = Duration::from_millis(20);

/// A configuration (one thread, no database, a fresh directory holding a
/// small `payload.bin`) and a listener on a free port, for a test server.
pub fn test_server_config(target_name: &str) -> (Config, TcpListener) {
    let dir: PathBuf = tempfile::tempdir().expect("temp dir").keep();
    crate::payload::write_payload(&dir.join("payload.bin"), 64 * 1024).expect("payload");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port().to_string();
    let dir_text = dir.to_string_lossy().into_owned();
    let env = ServerEnv::from_lookup(|name| match name {
        "PORT" => Some(port.clone()),
        "TARGET_NAME" => Some(target_name.to_owned()),
        "DATA_DIR" | "UPLOAD_DIR" => Some(dir_text.clone()),
        _ => None,
    })
    .expect("env");
    (Config::new(env, 1, 1).expect("config"), listener)
}

/// A server under test: where it listens, and the certificates it serves
/// when it is an HTTPS port.
#[derive(Debug, Clone, Copy)]
pub struct TestServer {
    pub address: SocketAddr,
    pub tls: Option<&'static TestCerts>,
}

impl TestServer {
    pub fn plain(address: SocketAddr) -> Self {
        Self { address, tls: None }
    }

    /// A new connection, over TLS (offering ALPN `http/1.1`) on an HTTPS port.
    pub fn client(&self) -> TestClient {
        match self.tls {
            None => TestClient::connect(self.address),
            Some(certs) => connect_tls(self.address, certs, &[b"http/1.1"]).client,
        }
    }
}

/// [`test_server_config`] for an HTTPS port serving `certs`.
pub fn test_tls_server_config(target_name: &str, certs: &TestCerts) -> (Config, TcpListener) {
    let (mut config, listener) = test_server_config(target_name);
    config.tls = Some(
        crate::tls::server_config(&certs.files(), crate::protocol::HttpProtocol::Http1)
            .expect("TLS configuration"),
    );
    (config, listener)
}

/// Declares one `#[test]` per case of this suite. `$server` is an
/// expression giving the [`TestServer`] of a server started once per test
/// binary; `$name` is its `TARGET_NAME`.
#[macro_export]
macro_rules! raw_target_tests {
    ($server:expr, $name:expr, [$($case:ident),* $(,)?]) => {
        $(
            #[test]
            fn $case() {
                $crate::raw_suite::$case($server, $name);
            }
        )*
    };
    ($server:expr, $name:expr) => {
        $crate::raw_target_tests!($server, $name, [
            pipelined_requests_are_answered_in_order,
            a_head_split_over_many_writes_is_answered_once,
            an_upload_body_across_reads_is_hashed_whole_and_the_next_request_follows,
            a_body_sent_to_another_endpoint_is_skipped,
            expect_continue_gets_an_interim_answer_before_the_body,
            an_oversized_head_is_431_and_closes,
            garbage_is_400_and_closes,
            too_large_upload_is_413_without_reading_the_body,
            connection_close_is_honoured_and_head_has_no_body,
            db_without_database_url_is_503_json,
        ]);
    };
}

/// Declares the TLS cases (`$server` is an HTTPS [`TestServer`]); a target
/// runs [`raw_target_tests!`](crate::raw_target_tests) over TLS too.
#[macro_export]
macro_rules! raw_tls_target_tests {
    ($server:expr, $name:expr) => {
        $crate::raw_target_tests!(
            $server,
            $name,
            [
                tls_alpn_agrees_on_http1_with_the_certificate_given,
                tls_cleartext_on_the_tls_port_gets_no_http_answer,
            ]
        );
    };
}

pub fn tls_alpn_agrees_on_http1_with_the_certificate_given(server: TestServer, target_name: &str) {
    let certs = server.tls.expect("an HTTPS test server");
    let mut session = connect_tls(server.address, certs, &[b"http/1.1"]);
    assert_eq!(session.alpn.as_deref(), Some(b"http/1.1".as_slice()));
    assert_eq!(session.leaf.as_ref(), Some(certs.leaf()));
    session
        .client
        .send(b"GET /json HTTP/1.1\r\nHost: x\r\n\r\n");
    let json = session.client.response();
    assert_eq!(json.body_text(), r#"{"message":"Hello, World!"}"#);
    assert_eq!(json.header("server"), Some(target_name));
}

pub fn tls_cleartext_on_the_tls_port_gets_no_http_answer(server: TestServer, _target_name: &str) {
    let reply = cleartext_reply(server.address);
    assert!(!reply.starts_with(b"HTTP/"), "{reply:?}");
}

pub fn pipelined_requests_are_answered_in_order(server: TestServer, _target_name: &str) {
    let mut client = server.client();
    client.send(
        b"GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\nGET /json HTTP/1.1\r\nHost: x\r\n\r\nGET /io?ms=0 HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\n",
    );
    let answers: Vec<(u16, String)> = (0..4)
        .map(|_| client.response())
        .map(|r| (r.status, r.body_text()))
        .collect();
    assert_eq!(answers[0], (200, "Hello, World!".into()));
    assert_eq!(answers[1], (200, r#"{"message":"Hello, World!"}"#.into()));
    assert_eq!(
        answers[2],
        (200, r#"{"message":"Hello, World!","waited_ms":0}"#.into())
    );
    assert_eq!(answers[3].0, 404);
}

pub fn a_head_split_over_many_writes_is_answered_once(server: TestServer, target_name: &str) {
    let mut client = server.client();
    for piece in ["GE", "T /js", "on HTTP/1.1\r", "\nHost: x\r\n", "\r", "\n"] {
        client.send(piece.as_bytes());
        sleep(PIECE_PAUSE);
    }
    let response = client.response();
    assert_eq!(response.status, 200);
    assert_eq!(response.header("server"), Some(target_name));
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert!(response.header("date").is_some_and(|d| d.ends_with(" GMT")));
}

pub fn an_upload_body_across_reads_is_hashed_whole_and_the_next_request_follows(
    server: TestServer,
    _target_name: &str,
) {
    let body: Vec<u8> = (0..300_000u32).map(|i| (i % 7) as u8).collect();
    let mut client = server.client();
    let head = format!(
        "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut first = head.into_bytes();
    first.extend_from_slice(&body[..1000]);
    client.send(&first);
    for piece in body[1000..].chunks(70_000) {
        sleep(PIECE_PAUSE);
        client.send(piece);
    }
    client.send(b"GET /plaintext HTTP/1.1\r\n\r\n");
    let expected = format!(
        r#"{{"bytes":300000,"sha256":"{}"}}"#,
        crate::digest::hex_lower(&Sha256::digest(&body))
    );
    assert_eq!(client.response().body_text(), expected);
    assert_eq!(client.response().body_text(), "Hello, World!");
}

pub fn a_body_sent_to_another_endpoint_is_skipped(server: TestServer, _target_name: &str) {
    let mut client = server.client();
    client.send(b"POST /plaintext HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /plaintext HTTP/1.1\r\n\r\n");
    assert_eq!(client.response().status, 405);
    assert_eq!(client.response().body_text(), "Hello, World!");
}

pub fn expect_continue_gets_an_interim_answer_before_the_body(
    server: TestServer,
    _target_name: &str,
) {
    let mut client = server.client();
    client.send(b"POST /upload HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n");
    assert_eq!(client.response().status, 100);
    client.send(b"abc");
    let response = client.response();
    assert_eq!(response.status, 200);
    assert!(response.body_text().contains(r#""bytes":3"#));
}

pub fn an_oversized_head_is_431_and_closes(server: TestServer, _target_name: &str) {
    let mut client = server.client();
    let filler = "a".repeat(crate::http1::MAX_HEAD_BYTES);
    client.send(format!("GET /plaintext HTTP/1.1\r\nX-Fill: {filler}\r\n\r\n").as_bytes());
    let response = client.response();
    assert_eq!(response.status, 431);
    assert_eq!(response.header("connection"), Some("close"));
    client.assert_closed();
}

pub fn garbage_is_400_and_closes(server: TestServer, _target_name: &str) {
    let mut client = server.client();
    client.send(b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03");
    let response = client.response();
    assert_eq!(response.status, 400);
    assert!(
        response
            .body_text()
            .starts_with(r#"{"error":"malformed request"#)
    );
    client.assert_closed();
}

pub fn too_large_upload_is_413_without_reading_the_body(server: TestServer, _target_name: &str) {
    let mut client = server.client();
    client.send(b"POST /upload HTTP/1.1\r\nContent-Length: 67108865\r\n\r\n");
    assert_eq!(client.response().status, 413);
    client.assert_closed();
}

pub fn connection_close_is_honoured_and_head_has_no_body(server: TestServer, _target_name: &str) {
    let mut client = server.client();
    client.send(
        b"HEAD /plaintext HTTP/1.1\r\n\r\nGET /file?kb=2 HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    let head = client.head_response();
    assert_eq!(head.header("content-length"), Some("13"));
    // The HEAD answer carries no body, so the next bytes are the file answer.
    let file = client.response();
    assert_eq!(file.status, 200);
    assert_eq!(file.body.len(), 2048);
    assert!(
        file.body
            .iter()
            .enumerate()
            .all(|(i, b)| *b == (i % 251) as u8)
    );
    assert_eq!(file.header("connection"), Some("close"));
    client.assert_closed();
}

pub fn db_without_database_url_is_503_json(server: TestServer, _target_name: &str) {
    let mut client = server.client();
    client.send(b"GET /db HTTP/1.1\r\n\r\nGET /stats HTTP/1.1\r\n\r\n");
    let db = client.response();
    assert_eq!(db.status, 503);
    assert_eq!(db.header("content-type"), Some("application/json"));
    let stats = client.response().body_text();
    assert!(
        stats.starts_with(r#"{"model":"thread-per-core-io-uring","threads":"#),
        "{stats}"
    );
}
