//! The compio connection loop against a real socket: pipelining, split
//! heads, bodies across reads, oversized heads and garbage.

use std::net::{SocketAddr, TcpListener};
use std::sync::OnceLock;
use std::thread::sleep;
use std::time::Duration;

use rust_common::env::ServerEnv;
use rust_common::testing::TestClient;
use sha2::{Digest, Sha256};

/// Pause between writes so that the server sees the pieces separately.
const PIECE_PAUSE: Duration = Duration::from_millis(20);

fn server() -> SocketAddr {
    static ADDRESS: OnceLock<SocketAddr> = OnceLock::new();
    *ADDRESS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir").keep();
        rust_common::payload::write_payload(&dir.join("payload.bin"), 64 * 1024).expect("payload");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = listener.local_addr().expect("address");
        let port = address.port().to_string();
        let dir_text = dir.to_string_lossy().into_owned();
        let env = ServerEnv::from_lookup(|name| match name {
            "PORT" => Some(port.clone()),
            "TARGET_NAME" => Some("rust-compio".into()),
            "DATA_DIR" | "UPLOAD_DIR" => Some(dir_text.clone()),
            _ => None,
        })
        .expect("env");
        let config = rust_compio::Config::new(env, 1, 1).expect("config");
        rust_compio::start_on(config, vec![listener]).expect("start");
        address
    })
}

fn connect() -> TestClient {
    TestClient::connect(server())
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let mut client = connect();
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

#[test]
fn a_head_split_over_many_writes_is_answered_once() {
    let mut client = connect();
    for piece in ["GE", "T /js", "on HTTP/1.1\r", "\nHost: x\r\n", "\r", "\n"] {
        client.send(piece.as_bytes());
        sleep(PIECE_PAUSE);
    }
    let response = client.response();
    assert_eq!(response.status, 200);
    assert_eq!(response.header("server"), Some("rust-compio"));
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert!(response.header("date").is_some_and(|d| d.ends_with(" GMT")));
}

#[test]
fn an_upload_body_across_reads_is_hashed_whole_and_the_next_request_follows() {
    let body: Vec<u8> = (0..300_000u32).map(|i| (i % 7) as u8).collect();
    let mut client = connect();
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
        rust_common::digest::hex_lower(&Sha256::digest(&body))
    );
    assert_eq!(client.response().body_text(), expected);
    assert_eq!(client.response().body_text(), "Hello, World!");
}

#[test]
fn a_body_sent_to_another_endpoint_is_skipped() {
    let mut client = connect();
    client.send(b"POST /plaintext HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /plaintext HTTP/1.1\r\n\r\n");
    assert_eq!(client.response().status, 405);
    assert_eq!(client.response().body_text(), "Hello, World!");
}

#[test]
fn expect_continue_gets_an_interim_answer_before_the_body() {
    let mut client = connect();
    client.send(b"POST /upload HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n");
    assert_eq!(client.response().status, 100);
    client.send(b"abc");
    let response = client.response();
    assert_eq!(response.status, 200);
    assert!(response.body_text().contains(r#""bytes":3"#));
}

#[test]
fn an_oversized_head_is_431_and_closes() {
    let mut client = connect();
    let filler = "a".repeat(rust_common::http1::MAX_HEAD_BYTES);
    client.send(format!("GET /plaintext HTTP/1.1\r\nX-Fill: {filler}\r\n\r\n").as_bytes());
    let response = client.response();
    assert_eq!(response.status, 431);
    assert_eq!(response.header("connection"), Some("close"));
    client.assert_closed();
}

#[test]
fn garbage_is_400_and_closes() {
    let mut client = connect();
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

#[test]
fn too_large_upload_is_413_without_reading_the_body() {
    let mut client = connect();
    client.send(b"POST /upload HTTP/1.1\r\nContent-Length: 67108865\r\n\r\n");
    assert_eq!(client.response().status, 413);
    client.assert_closed();
}

#[test]
fn connection_close_is_honoured_and_head_has_no_body() {
    let mut client = connect();
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

#[test]
fn db_without_database_url_is_503_json() {
    let mut client = connect();
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
