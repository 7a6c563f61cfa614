//! The axum target served in-process, checked with raw HTTP/1.1 bytes.

use std::net::SocketAddr;
use std::sync::OnceLock;

use rust_common::env::ServerEnv;
use rust_common::testing::{Response, TestClient};
use sha2::{Digest, Sha256};

fn server() -> SocketAddr {
    static ADDRESS: OnceLock<SocketAddr> = OnceLock::new();
    *ADDRESS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir").keep();
        rust_common::payload::write_payload(&dir.join("payload.bin"), 64 * 1024).expect("payload");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let address = listener.local_addr().expect("address");
        let dir_text = dir.to_string_lossy().into_owned();
        let env = ServerEnv::from_lookup(|name| match name {
            "PORT" => Some(address.port().to_string()),
            "TARGET_NAME" => Some("rust-axum".into()),
            "DATA_DIR" | "UPLOAD_DIR" => Some(dir_text.clone()),
            _ => None,
        })
        .expect("env");
        let router = rust_axum::router(&env, 1).expect("router");
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                axum::serve(listener, router).await.expect("serve");
            });
        });
        address
    })
}

fn get(target: &str) -> Response {
    let mut client = TestClient::connect(server());
    client.send(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
    client.response()
}

fn assert_contract_headers(response: &Response, content_type: &str) {
    assert_eq!(response.header("server"), Some("rust-axum"));
    assert!(response.header("date").is_some_and(|d| d.ends_with(" GMT")));
    assert_eq!(response.header("content-type"), Some(content_type));
    assert_eq!(
        response.header("content-length"),
        Some(response.body.len().to_string().as_str())
    );
    assert_eq!(response.header("transfer-encoding"), None);
}

#[test]
fn endpoints_answer_with_the_contract_headers() {
    let plaintext = get("/plaintext");
    assert_eq!(plaintext.body_text(), "Hello, World!");
    assert_contract_headers(&plaintext, "text/plain; charset=utf-8");
    let mixed = get("/mixed?iters=1&ms=0");
    assert_eq!(
        mixed.body_text(),
        r#"{"digest":"66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925","iters":1,"waited_ms":0}"#
    );
    assert_contract_headers(&mixed, "application/json");
    let file = get("/file?kb=3");
    assert_contract_headers(&file, "application/octet-stream");
    assert!(
        file.body
            .iter()
            .enumerate()
            .all(|(i, b)| *b == (i % 251) as u8)
    );
}

#[test]
fn errors_are_json_with_the_contract_headers() {
    for (target, status) in [
        ("/nope", 404),
        ("/upload", 405),
        ("/io?ms=10001", 400),
        ("/db", 503),
    ] {
        let response = get(target);
        assert_eq!(response.status, status, "{target}");
        assert_contract_headers(&response, "application/json");
        assert!(
            response.body_text().starts_with(r#"{"error":""#),
            "{target}"
        );
    }
    assert_eq!(
        get("/file?kb=0").body_text(),
        r#"{"error":"kb must be an integer in 1..=10240"}"#
    );
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let mut client = TestClient::connect(server());
    client.send(b"GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\nGET /json HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(client.response().body_text(), "Hello, World!");
    assert_eq!(
        client.response().body_text(),
        r#"{"message":"Hello, World!"}"#
    );
}

#[test]
fn an_upload_in_pieces_is_hashed_whole() {
    let body: Vec<u8> = (0..500_000u32).map(|i| (i % 13) as u8).collect();
    let mut client = TestClient::connect(server());
    client.send(
        format!(
            "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    for piece in body.chunks(100_000) {
        client.send(piece);
    }
    let expected = format!(
        r#"{{"bytes":500000,"sha256":"{}"}}"#,
        rust_common::digest::hex_lower(&Sha256::digest(&body))
    );
    assert_eq!(client.response().body_text(), expected);
}

#[test]
fn a_declared_body_over_64_mib_is_413_before_it_is_sent() {
    let mut client = TestClient::connect(server());
    client.send(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 67108865\r\n\r\n");
    let response = client.response();
    assert_eq!(response.status, 413);
    assert_contract_headers(&response, "application/json");
}

#[test]
fn stats_reports_the_model_and_live_tasks() {
    let stats = get("/stats").body_text();
    assert!(
        stats.starts_with(r#"{"model":"work-stealing-async","threads":"#),
        "{stats}"
    );
    assert!(stats.ends_with(r#""heap_bytes":null}"#), "{stats}");
    // At least the connection task that asked.
    assert!(!stats.contains(r#""tasks":0"#), "{stats}");
}
