//! A blocking face on the `h2` crate: one HTTP/2 connection (h2c by prior
//! knowledge, or h2 over TLS), driven by a current-thread tokio runtime
//! while a request is under way. An implementation independent of the
//! load generator's own framing, so each checks the other.

use std::future::poll_fn;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2::client::SendRequest;
use h2::{RecvStream, SendStream};
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

use crate::client::{ClientError, Framing, Request, Response};
use crate::transport::Connector;

/// The most body bytes a response may carry (the largest `/file` is 10 MiB).
const MAX_BODY_BYTES: usize = 80 * 1024 * 1024;
/// Headers that HTTP/2 forbids (RFC 9113 §8.2.2): never sent.
const CONNECTION_HEADERS: [&str; 4] = ["connection", "keep-alive", "transfer-encoding", "upgrade"];

/// One HTTP/2 connection to the target.
#[derive(Debug)]
pub struct H2Client {
    runtime: Runtime,
    sender: SendRequest<Bytes>,
    authority: String,
    scheme: &'static str,
    timeout: Duration,
    alpn: Option<Vec<u8>>,
}

impl H2Client {
    /// Connects and completes the HTTP/2 preface (over TLS, the handshake
    /// first; the connector's configuration says which ALPN ids to offer).
    ///
    /// # Errors
    /// The connection, the handshake or the preface failed.
    pub fn connect(
        connector: &Connector,
        addr: SocketAddr,
        timeout: Duration,
    ) -> Result<Self, ClientError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let connected = runtime.block_on(async {
            tokio::time::timeout(timeout, handshake(connector, addr))
                .await
                .unwrap_or(Err(ClientError::Timeout(timeout)))
        });
        let (sender, alpn) = connected?;
        let scheme = match connector {
            Connector::Plain => "http",
            Connector::Tls { .. } => "https",
        };
        Ok(Self {
            runtime,
            sender,
            authority: addr.to_string(),
            scheme,
            timeout,
            alpn,
        })
    }

    /// The protocol ALPN agreed on (`None` in cleartext, or when the server
    /// chose none).
    #[must_use]
    pub fn alpn(&self) -> Option<&[u8]> {
        self.alpn.as_deref()
    }

    /// Changes how long a response may take.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Sends `request` (its body in full) on a new stream and reads the response.
    ///
    /// # Errors
    /// The stream was refused or reset, the response was malformed, or it
    /// did not complete within the timeout.
    pub fn exchange(&mut self, request: &Request) -> Result<Response, ClientError> {
        let body = Bytes::from(request.body.clone());
        let length = body.len() as u64;
        self.exchange_head(self.head(request, length), length, move |stream| {
            finish_body(stream, body)
        })
    }

    /// Sends a request given by its parts, as a user's workload names them
    /// (any method, any header names), and reads the response. A `Host`
    /// header becomes the `:authority`, as the load generator sends it.
    ///
    /// # Errors
    /// As [`H2Client::exchange`]; a method, target or header that HTTP/2
    /// cannot carry is refused, naming it, before anything is sent.
    pub fn exchange_parts(
        &mut self,
        method: &str,
        target: &str,
        headers: &[(String, String)],
        body: Vec<u8>,
    ) -> Result<Response, ClientError> {
        let length = body.len() as u64;
        let pairs = headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        let head = self.head_of(method, target, pairs, length).map_err(|e| {
            ClientError::Malformed(format!("cannot send {method} {target} over HTTP/2: {e}"))
        })?;
        let body = Bytes::from(body);
        self.exchange_head(head, length, move |stream| finish_body(stream, body))
    }

    /// Sends `request` declaring a body of `length` bytes and sends
    /// `chunks` of it (drawn from `next` until it returns `None`), then reads
    /// the response.
    ///
    /// # Errors
    /// As [`H2Client::exchange`].
    pub fn exchange_streamed(
        &mut self,
        request: &Request,
        length: u64,
        mut next: impl FnMut() -> Option<Vec<u8>>,
    ) -> Result<Response, ClientError> {
        self.exchange_head(
            self.head(request, length),
            length,
            move |mut stream| async move {
                while let Some(chunk) = next() {
                    stream = send_body(stream, Bytes::from(chunk)).await?;
                }
                stream.send_data(Bytes::new(), true)?;
                Ok(stream)
            },
        )
    }

    /// Sends the head of `request` declaring `length` body bytes, sends no
    /// body, and reads the response (for a server that must refuse it).
    ///
    /// # Errors
    /// As [`H2Client::exchange`].
    pub fn exchange_head_only(
        &mut self,
        request: &Request,
        length: u64,
    ) -> Result<Response, ClientError> {
        self.exchange_head(self.head(request, length), length, |stream| async {
            Ok(stream)
        })
    }

    /// Sends every request at once, each on its own stream, and reads the
    /// responses; each comes with the moment it was complete.
    pub fn exchange_concurrently(
        &mut self,
        requests: &[Request],
    ) -> Vec<Result<(Response, Instant), ClientError>> {
        let timeout = self.timeout;
        let started = Instant::now();
        let pending: Vec<_> = requests
            .iter()
            .map(|request| {
                let head = self.head(request, request.body.len() as u64);
                let mut sender = self.sender.clone();
                let body = Bytes::from(request.body.clone());
                self.runtime.spawn(async move {
                    let exchange = async {
                        let stream = start(&mut sender, head, body.is_empty()).await?;
                        let (response, send) = stream;
                        let _send = if body.is_empty() {
                            send
                        } else {
                            finish_body(send, body).await?
                        };
                        let response = read(response.await?, started).await?;
                        Ok((response, Instant::now()))
                    };
                    tokio::time::timeout(timeout, exchange)
                        .await
                        .unwrap_or(Err(ClientError::Timeout(timeout)))
                })
            })
            .collect();
        pending
            .into_iter()
            .map(|task| {
                self.runtime.block_on(task).unwrap_or_else(|e| {
                    Err(ClientError::Malformed(format!("the exchange failed: {e}")))
                })
            })
            .collect()
    }

    fn exchange_head<F, Fut>(
        &mut self,
        head: http::Request<()>,
        length: u64,
        send: F,
    ) -> Result<Response, ClientError>
    where
        F: FnOnce(SendStream<Bytes>) -> Fut,
        Fut: Future<Output = Result<SendStream<Bytes>, ClientError>>,
    {
        let timeout = self.timeout;
        let sender = &mut self.sender;
        self.runtime.block_on(async move {
            let exchange = async {
                let started = Instant::now();
                let (response, stream) = start(sender, head, length == 0).await?;
                let _stream = if length == 0 {
                    stream
                } else {
                    send(stream).await?
                };
                read(response.await?, started).await
            };
            tokio::time::timeout(timeout, exchange)
                .await
                .unwrap_or(Err(ClientError::Timeout(timeout)))
        })
    }

    /// The HTTP/2 form of `request`'s head: pseudo-headers from its method
    /// and target, its own headers less the connection-specific ones, and
    /// `content-length` where HTTP/1.1 would send one.
    fn head(&self, request: &Request, length: u64) -> http::Request<()> {
        let pairs = request.headers.iter().map(|(n, v)| (*n, v.as_str()));
        // The rules' requests are fixed in their code: always well formed.
        self.head_of(request.method, &request.target, pairs, length)
            .unwrap_or_default()
    }

    fn head_of<'a>(
        &self,
        method: &str,
        target: &str,
        headers: impl Iterator<Item = (&'a str, &'a str)> + Clone,
        length: u64,
    ) -> Result<http::Request<()>, http::Error> {
        let authority = headers
            .clone()
            .find(|(name, _)| name.eq_ignore_ascii_case("host"))
            .map_or(self.authority.as_str(), |(_, value)| value);
        let uri = format!("{}://{authority}{target}", self.scheme);
        let mut head = http::Request::builder().method(method).uri(uri);
        let mut has_length = false;
        for (name, value) in headers {
            let lower = name.to_ascii_lowercase();
            has_length |= lower == "content-length";
            if lower != "host" && !CONNECTION_HEADERS.contains(&lower.as_str()) {
                head = head.header(name, value);
            }
        }
        if !has_length && (method == "POST" || method == "PUT" || length > 0) {
            head = head.header("content-length", length);
        }
        head.body(())
    }
}

type Started = (h2::client::ResponseFuture, SendStream<Bytes>);

/// Waits until a stream may be opened, then opens it with `head`.
async fn start(
    sender: &mut SendRequest<Bytes>,
    head: http::Request<()>,
    end_of_stream: bool,
) -> Result<Started, ClientError> {
    poll_fn(|cx| sender.poll_ready(cx)).await?;
    Ok(sender.send_request(head, end_of_stream)?)
}

/// Connects, shakes hands (TLS, then the HTTP/2 preface) and starts the
/// task that drives the connection.
async fn handshake(
    connector: &Connector,
    addr: SocketAddr,
) -> Result<(SendRequest<Bytes>, Option<Vec<u8>>), ClientError> {
    let tcp = TcpStream::connect(addr)
        .await
        .map_err(|source| ClientError::Connect { addr, source })?;
    tcp.set_nodelay(true)?;
    match connector {
        Connector::Plain => Ok((preface(tcp).await?, None)),
        Connector::Tls { config, name } => {
            let stream = tls(Arc::clone(config), name.clone(), tcp)
                .await
                .map_err(|source| ClientError::Handshake { addr, source })?;
            let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
            if alpn.as_deref() != Some(b"h2".as_slice()) {
                let agreed = alpn.map_or_else(
                    || "no protocol".to_owned(),
                    |id| String::from_utf8_lossy(&id).into_owned(),
                );
                return Err(ClientError::Malformed(format!(
                    "ALPN agreed on {agreed}, not h2: the server does not speak HTTP/2 over TLS here"
                )));
            }
            Ok((preface(stream).await?, alpn))
        }
    }
}

async fn tls(
    config: Arc<rustls::ClientConfig>,
    name: ServerName<'static>,
    tcp: TcpStream,
) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    tokio_rustls::TlsConnector::from(config)
        .connect(name, tcp)
        .await
}

async fn preface<S>(stream: S) -> Result<SendRequest<Bytes>, ClientError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = h2::client::handshake(stream).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

/// Sends all of `data` as the flow-control window allows; the stream stays open.
async fn send_body(
    mut stream: SendStream<Bytes>,
    mut data: Bytes,
) -> Result<SendStream<Bytes>, ClientError> {
    while !data.is_empty() {
        stream.reserve_capacity(data.len());
        let granted = poll_fn(|cx| stream.poll_capacity(cx))
            .await
            .ok_or_else(|| ClientError::Closed("before the body was sent".to_owned()))??;
        if granted > 0 {
            let chunk = data.split_to(granted.min(data.len()));
            stream.send_data(chunk, false)?;
        }
    }
    Ok(stream)
}

/// Sends all of `data` and ends the stream.
async fn finish_body(
    stream: SendStream<Bytes>,
    data: Bytes,
) -> Result<SendStream<Bytes>, ClientError> {
    let mut stream = send_body(stream, data).await?;
    stream.send_data(Bytes::new(), true)?;
    Ok(stream)
}

/// The whole response, with its body read as the window is released.
async fn read(
    response: http::Response<RecvStream>,
    started: Instant,
) -> Result<Response, ClientError> {
    let (parts, mut body) = response.into_parts();
    let headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes()).trim().to_owned();
            (name.as_str().to_owned(), value)
        })
        .collect();
    let mut received = Vec::new();
    while let Some(chunk) = poll_fn(|cx| body.poll_data(cx)).await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        received.extend_from_slice(&chunk);
        if received.len() > MAX_BODY_BYTES {
            return Err(ClientError::Malformed("an endless body".to_owned()));
        }
    }
    let framing = if parts.headers.contains_key(http::header::CONTENT_LENGTH) {
        Framing::ContentLength
    } else {
        Framing::EndStream
    };
    Ok(Response {
        status: parts.status.as_u16(),
        headers,
        body: received,
        framing,
        elapsed: started.elapsed(),
    })
}
