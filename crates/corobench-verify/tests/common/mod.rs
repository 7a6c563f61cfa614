//! Fronts that give the test kit's cleartext contract server the protocols
//! it lacks: TLS (rustls) in front of it, and HTTP/2 (the `h2` crate, h2c or
//! over TLS) translated into HTTP/1.1 requests to it, stream by stream or,
//! to play a broken server, one stream after the other.

#![allow(dead_code)] // each test uses a different subset

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the HTTP/2 front runs the streams of one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Streams {
    Concurrent,
    /// Each stream waits for the one before it: a server that serialises.
    OneAtATime,
}

/// A front running on its own thread until the test ends.
#[derive(Debug)]
pub struct Front {
    pub addr: SocketAddr,
}

/// Terminates TLS with `tls` and passes the bytes to `backend`.
pub fn tls_front(backend: SocketAddr, tls: Arc<rustls::ServerConfig>) -> Front {
    spawn_front(move |tcp| {
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::clone(&tls));
        async move {
            let Ok(mut stream) = acceptor.accept(tcp).await else {
                return;
            };
            if let Ok(mut upstream) = TcpStream::connect(backend).await {
                let _ = tokio::io::copy_bidirectional(&mut stream, &mut upstream).await;
            }
        }
    })
}

/// Serves HTTP/2 (over TLS when `tls` is given, else h2c by prior
/// knowledge), each stream forwarded to `backend` as an HTTP/1.1 request.
pub fn h2_front(
    backend: SocketAddr,
    tls: Option<Arc<rustls::ServerConfig>>,
    streams: Streams,
) -> Front {
    spawn_front(move |tcp| {
        let tls = tls.clone();
        async move {
            match tls {
                None => serve_h2(tcp, backend, streams).await,
                Some(config) => {
                    let acceptor = tokio_rustls::TlsAcceptor::from(config);
                    if let Ok(stream) = acceptor.accept(tcp).await {
                        serve_h2(stream, backend, streams).await;
                    }
                }
            }
        }
    })
}

fn spawn_front<F, Fut>(serve: F) -> Front
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        runtime.block_on(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                tokio::spawn(serve(tcp));
            }
        });
    });
    Front { addr }
}

async fn serve_h2<S>(stream: S, backend: SocketAddr, streams: Streams)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Ok(mut connection) = h2::server::handshake(stream).await else {
        return;
    };
    while let Some(Ok((request, respond))) = connection.accept().await {
        let forwarded = forward(request, respond, backend);
        match streams {
            Streams::Concurrent => drop(tokio::spawn(forwarded)),
            Streams::OneAtATime => {
                // The connection must still be polled while the stream is
                // answered: a server that serialises still speaks HTTP/2.
                let task = tokio::spawn(forwarded);
                tokio::select! {
                    _ = task => {}
                    _ = std::future::poll_fn(|cx| connection.poll_closed(cx)) => return,
                }
            }
        }
    }
}

/// One stream as an HTTP/1.1 exchange on a connection of its own.
async fn forward(
    request: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    backend: SocketAddr,
) {
    let Ok(upstream) = TcpStream::connect(backend).await else {
        return;
    };
    let (mut from_backend, mut to_backend) = upstream.into_split();
    let (parts, mut body) = request.into_parts();
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut head = format!("{} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n", parts.method);
    for (name, value) in &parts.headers {
        head.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap_or("")));
    }
    head.push_str("\r\n");
    if to_backend.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    tokio::spawn(async move {
        while let Some(Ok(chunk)) = std::future::poll_fn(|cx| body.poll_data(cx)).await {
            let _ = body.flow_control().release_capacity(chunk.len());
            if to_backend.write_all(&chunk).await.is_err() {
                return;
            }
        }
    });
    let Some((status, headers, bytes)) = read_response(&mut from_backend).await else {
        return;
    };
    let mut response = http::Response::builder().status(status);
    for (name, value) in headers {
        let connection_specific = ["connection", "keep-alive", "transfer-encoding"];
        if !connection_specific.contains(&name.to_ascii_lowercase().as_str()) {
            response = response.header(name, value);
        }
    }
    let Ok(mut send) = respond.send_response(response.body(()).unwrap(), false) else {
        return;
    };
    let _ = send.send_data(Bytes::from(bytes), true);
}

/// An HTTP/1.1 response with a `Content-Length` body, as the kit sends them.
async fn read_response(
    from: &mut (impl AsyncRead + Unpin),
) -> Option<(u16, Vec<(String, String)>, Vec<u8>)> {
    let mut buffer = Vec::new();
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        if let Ok(httparse::Status::Complete(head)) = response.parse(&buffer) {
            let status = response.code?;
            let headers: Vec<(String, String)> = response
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_owned(),
                        String::from_utf8_lossy(h.value).into_owned(),
                    )
                })
                .collect();
            let length: usize = headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse().ok())
                .unwrap_or(0);
            let mut body = buffer.split_off(head);
            while body.len() < length {
                let mut chunk = vec![0u8; 64 * 1024];
                let n = from.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
                body.extend_from_slice(&chunk[..n]);
            }
            body.truncate(length);
            return Some((status, headers, body));
        }
        let mut chunk = [0u8; 4096];
        let n = from.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..n]);
    }
}
