//! The axum target over TLS (HTTP/1.1 and h2 by ALPN) and over h2c by prior
//! knowledge, served in-process as `main` serves it.

use std::net::SocketAddr;
use std::sync::OnceLock;

use axum::Router;
use rust_common::env::ServerEnv;
use rust_common::protocol::HttpProtocol;
use rust_common::testing_tls::{TestCerts, cleartext_reply, connect_tls};
use tokio::io::{AsyncRead, AsyncWrite};

const NAME: &str = "rust-axum";

fn router() -> Router {
    let dir = tempfile::tempdir().expect("temp dir").keep();
    rust_common::payload::write_payload(&dir.join("payload.bin"), 64 * 1024).expect("payload");
    let dir_text = dir.to_string_lossy().into_owned();
    let env = ServerEnv::from_lookup(|name| match name {
        "PORT" => Some("1".into()),
        "TARGET_NAME" => Some(NAME.into()),
        "DATA_DIR" | "UPLOAD_DIR" => Some(dir_text.clone()),
        _ => None,
    })
    .expect("env");
    rust_axum::router(&env, 1).expect("router")
}

/// Runs `serve` on a listener of its own in a runtime thread of its own.
fn start<F>(serve: impl FnOnce(tokio::net::TcpListener) -> F + Send + 'static) -> SocketAddr
where
    F: Future<Output = ()>,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let address = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            serve(tokio::net::TcpListener::from_std(listener).expect("listener")).await;
        });
    });
    address
}

fn certs() -> &'static TestCerts {
    static CERTS: OnceLock<TestCerts> = OnceLock::new();
    CERTS.get_or_init(TestCerts::new)
}

/// The HTTPS port, as `HTTP_PROTOCOL=h2` with TLS starts it.
fn tls_server() -> SocketAddr {
    static ADDRESS: OnceLock<SocketAddr> = OnceLock::new();
    *ADDRESS.get_or_init(|| {
        let config = rust_common::tls::server_config(&certs().files(), HttpProtocol::H2)
            .expect("TLS config");
        start(move |listener| rust_axum::serve_tls(listener, router(), config))
    })
}

/// The cleartext port (HTTP/1.1 and h2c).
fn cleartext_server() -> SocketAddr {
    static ADDRESS: OnceLock<SocketAddr> = OnceLock::new();
    *ADDRESS.get_or_init(|| {
        start(|listener| async move {
            axum::serve(listener, router()).await.expect("serve");
        })
    })
}

#[test]
fn https_with_only_http1_offered_agrees_on_http1_and_serves_the_contract() {
    let mut session = connect_tls(tls_server(), certs(), &[b"http/1.1"]);
    assert_eq!(session.alpn.as_deref(), Some(b"http/1.1".as_slice()));
    assert_eq!(session.leaf.as_ref(), Some(certs().leaf()));
    session
        .client
        .send(b"GET /json HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
    let json = session.client.response();
    assert_eq!(json.body_text(), r#"{"message":"Hello, World!"}"#);
    assert_eq!(json.header("server"), Some(NAME));
    assert_eq!(json.header("content-length"), Some("27"));
    assert_eq!(session.client.response().status, 404);
}

#[test]
fn a_cleartext_request_on_the_tls_port_gets_no_http_answer() {
    let reply = cleartext_reply(tls_server());
    assert!(!reply.starts_with(b"HTTP/"), "{reply:?}");
}

/// One h2 request: status, headers and the whole body.
async fn h2_get(
    client: &mut h2::client::SendRequest<bytes::Bytes>,
    path: &str,
) -> (http::response::Parts, Vec<u8>) {
    let request = http::Request::get(format!("http://127.0.0.1{path}"))
        .body(())
        .expect("request");
    let (response, _) = client
        .clone()
        .ready()
        .await
        .expect("ready")
        .send_request(request, true)
        .expect("send");
    let (parts, mut body) = response.await.expect("response").into_parts();
    let mut bytes = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.expect("body");
        let _ = body.flow_control().release_capacity(chunk.len());
        bytes.extend_from_slice(&chunk);
    }
    (parts, bytes)
}

/// Checks an h2 connection: the contract's headers, and a slow stream that
/// does not hold up a fast one beside it.
async fn check_h2(io: impl AsyncRead + AsyncWrite + Unpin + Send + 'static) {
    let (mut client, connection) = h2::client::handshake(io).await.expect("h2 handshake");
    tokio::spawn(connection);
    let (parts, body) = h2_get(&mut client, "/plaintext").await;
    assert_eq!(parts.status, 200);
    assert_eq!(body, b"Hello, World!");
    assert_eq!(parts.headers["server"], NAME);
    assert_eq!(parts.headers["content-length"], "13");
    assert_eq!(parts.headers["content-type"], "text/plain; charset=utf-8");
    assert!(parts.headers.contains_key("date"));
    assert!(!parts.headers.contains_key("connection"));
    let mut slow_client = client.clone();
    let mut slow = Box::pin(h2_get(&mut slow_client, "/io?ms=5000"));
    // The slow stream is sent first; the fast one must finish while it waits.
    let fast = tokio::select! {
        biased;
        _ = &mut slow => panic!("/io?ms=5000 finished before /plaintext beside it"),
        fast = h2_get(&mut client, "/plaintext") => fast,
    };
    assert_eq!(fast.1, b"Hello, World!");
}

#[test]
fn https_with_h2_offered_agrees_on_h2_and_runs_streams_concurrently() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(tls_server())
            .await
            .expect("connect");
        let connector =
            tokio_rustls::TlsConnector::from(certs().client_config(&[b"h2", b"http/1.1"]));
        let name =
            tokio_rustls::rustls::pki_types::ServerName::try_from("127.0.0.1").expect("name");
        let tls = connector.connect(name, tcp).await.expect("TLS handshake");
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(b"h2".as_slice()));
        check_h2(tls).await;
    });
}

#[test]
fn cleartext_serves_h2c_by_prior_knowledge() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(cleartext_server())
            .await
            .expect("connect");
        check_h2(tcp).await;
    });
}
