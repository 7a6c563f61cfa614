//! HTTPS: each accepted connection's task does its TLS handshake (tokio-rustls),
//! then hyper serves the protocol ALPN agreed on: HTTP/2 for `h2`, HTTP/1.1
//! otherwise. The router is the one the cleartext port serves.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::serve::Listener;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;

/// A client that connects and never finishes its handshake gives up its
/// task after this long.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `router` over TLS on every connection `listener` accepts, until
/// the process ends.
pub async fn serve_tls(
    mut listener: impl Listener<Io = TcpStream>,
    router: Router,
    config: Arc<ServerConfig>,
) {
    let acceptor = TlsAcceptor::from(config);
    loop {
        // axum's listener retries failed accepts itself.
        let (stream, _peer) = listener.accept().await;
        tokio::spawn(serve_connection(acceptor.clone(), stream, router.clone()));
    }
}

async fn serve_connection(acceptor: TlsAcceptor, stream: TcpStream, router: Router) {
    // A failed or abandoned handshake only ends this connection.
    let Ok(Ok(stream)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await
    else {
        return;
    };
    let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2".as_slice());
    let builder = Builder::new(TokioExecutor::new());
    let builder = if h2 {
        builder.http2_only()
    } else {
        builder.http1_only()
    };
    let service = TowerToHyperService::new(router);
    // A reset or a malformed request only ends this connection.
    let _ = builder
        .serve_connection(TokioIo::new(stream), service)
        .await;
}
