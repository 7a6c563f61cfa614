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
        .map_err(|e| format!("HTTP/2 request: {e}"))?;
    let response = response.await.map_err(|e| format!("HTTP/2 response: {e}"));
    driver.abort();
    Ok(response?.status().as_u16())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read as _, Write as _};

    /// An h2c server that answers every stream with `code`, on its own thread.
    fn h2c_server(code: u16) -> SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        listener.set_nonblocking(true).unwrap();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let (tcp, _) = listener.accept().await.unwrap();
                let mut connection = ::h2::server::handshake(tcp).await.unwrap();
                while let Some(Ok((_, mut respond))) = connection.accept().await {
                    let response = http::Response::builder().status(code).body(()).unwrap();
                    let _ = respond.send_response(response, true);
                }
            });
        });
        addr
    }

    #[test]
    fn an_h2c_server_answers_the_probe() {
        let addr = h2c_server(200);
        assert_eq!(
            status(addr, "/healthz", None, Duration::from_secs(5)),
            Ok(200)
        );
    }

    #[test]
    fn an_http1_only_server_fails_the_h2c_probe_saying_so() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut request = [0u8; 512];
            let _ = conn.read(&mut request);
            let _ = conn.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        });
        let error = status(addr, "/healthz", None, Duration::from_secs(5)).unwrap_err();
        assert!(error.starts_with("HTTP/2"), "{error}");
    }
}
