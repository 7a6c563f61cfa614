//! The readiness probe over HTTP/2: h2c by prior knowledge, or h2 over TLS
//! with ALPN `h2`, one `GET` on a connection of its own.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;

use crate::tls;

/// The status code `GET PATH` answered with over HTTP/2, or why there was none.
pub(super) fn status(
    addr: SocketAddr,
    path: &str,
    tls: Option<Arc<rustls::ClientConfig>>,
    timeout: Duration,
) -> Result<u16, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start an HTTP/2 client: {e}"))?;
    runtime.block_on(async {
        tokio::time::timeout(timeout, exchange(addr, path, tls))
            .await
            .unwrap_or_else(|_| Err(format!("no HTTP/2 answer within {timeout:?}")))
    })
}

async fn exchange(
    addr: SocketAddr,
    path: &str,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> Result<u16, String> {
    let tcp = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    match tls {
        None => get(tcp, addr, path, "http").await,
        Some(config) => {
            let stream = tokio_rustls::TlsConnector::from(config)
                .connect(tls::server_name(addr.ip()), tcp)
                .await
                .map_err(|e| format!("TLS handshake: {e}"))?;
            let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
            if alpn.as_deref() != Some(b"h2".as_slice()) {
                let agreed = alpn.map_or_else(
                    || "none".to_owned(),
                    |p| String::from_utf8_lossy(&p).into_owned(),
                );
                return Err(format!("ALPN did not select h2 (agreed on {agreed})"));
            }
            get(stream, addr, path, "https").await
        }
    }
}

async fn get<S>(stream: S, addr: SocketAddr, path: &str, scheme: &str) -> Result<u16, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (client, connection) = ::h2::client::handshake(stream)
        .await
        .map_err(|e| format!("HTTP/2 handshake: {e}"))?;
    let driver = tokio::spawn(connection);
    let mut client = client
        .ready()
        .await
        .map_err(|e| format!("HTTP/2 connection: {e}"))?;
    let request = http::Request::get(format!("{scheme}://{addr}{path}"))
        .body(())
        .map_err(|e| e.to_string())?;
    let (response, _) = client
        .send_request(request, true)
        .map_err(|e| format!("send: {e}"))?;
    let response = response.await.map_err(|e| format!("response: {e}"));
    driver.abort();
    Ok(response?.status().as_u16())
}
