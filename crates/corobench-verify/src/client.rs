//! A small blocking HTTP/1.1 client that tells the verifier exactly what
//! came back: every header, the body, and how the body was framed.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::transport::{Connector, Stream};

/// The most header fields a response may carry.
const MAX_HEADERS: usize = 64;
/// A response head may not grow beyond this.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// A response body may not grow beyond this (the largest `/file` is 10 MiB).
const MAX_BODY_BYTES: usize = 80 * 1024 * 1024;

/// What went wrong between sending a request and holding its response.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot connect to {addr}: {source}")]
    Connect { addr: SocketAddr, source: io::Error },
    #[error("TLS handshake with {addr} failed: {source}")]
    Handshake { addr: SocketAddr, source: io::Error },
    #[error("no complete response within {0:?}")]
    Timeout(Duration),
    #[error("the connection closed {0}")]
    Closed(String),
    #[error("malformed response: {0}")]
    Malformed(String),
    #[error("HTTP/2: {0}")]
    Http2(#[from] h2::Error),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// How a response's body was delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    ContentLength,
    Chunked,
    /// Neither: the body ran until the server closed the connection.
    UntilClose,
    /// HTTP/2 without `content-length`: the body ended with its stream.
    EndStream,
}

/// A request to send.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: &'static str,
    pub target: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Request {
    #[must_use]
    pub fn get(target: &str) -> Self {
        Self::new("GET", target, Vec::new())
    }

    #[must_use]
    pub fn post(target: &str, body: Vec<u8>) -> Self {
        Self::new("POST", target, body)
    }

    fn new(method: &'static str, target: &str, body: Vec<u8>) -> Self {
        Self {
            method,
            target: target.to_owned(),
            headers: Vec::new(),
            body,
        }
    }

    /// Adds `Connection: close`.
    #[must_use]
    pub fn closing(mut self) -> Self {
        self.headers.push(("Connection", "close".to_owned()));
        self
    }

    /// `GET /json`, as messages name a request.
    #[must_use]
    pub fn label(&self) -> String {
        format!("{} {}", self.method, self.target)
    }

    /// The head, declaring a body of `content_length` bytes (sent apart).
    #[must_use]
    pub fn head_bytes(&self, content_length: u64) -> Vec<u8> {
        let mut head = format!(
            "{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\n",
            self.method, self.target
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if self.method == "POST" || content_length > 0 {
            head.push_str(&format!("Content-Length: {content_length}\r\n"));
        }
        head.push_str("\r\n");
        head.into_bytes()
    }

    /// Head and body.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = self.head_bytes(self.body.len() as u64);
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// A response as received.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub framing: Framing,
    /// From the start of the last send to the end of the response: never
    /// less than the time the server took, however the client is scheduled.
    pub elapsed: Duration,
}

impl Response {
    /// The first value of header `name` (case-insensitive).
    #[must_use]
    pub fn header<'a>(&'a self, name: &str) -> Option<&'a str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every value of header `name`.
    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text, shortened for messages.
    #[must_use]
    pub fn body_excerpt(&self) -> String {
        excerpt(&self.body)
    }

    /// The server said it will close the connection.
    #[must_use]
    pub fn says_close(&self) -> bool {
        self.headers_named("connection")
            .any(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// Up to 200 characters of `bytes`, lossily decoded, for messages.
#[must_use]
pub fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
    if bytes.len() > 200 {
        format!("{text}… ({} bytes)", bytes.len())
    } else {
        text
    }
}

/// One connection to the target.
#[derive(Debug)]
pub struct Client {
    stream: Stream,
    buffered: Vec<u8>,
    timeout: Duration,
    sent_at: Instant,
}

impl Client {
    /// Connects; every later read waits at most `timeout` for its response.
    ///
    /// # Errors
    /// The connection was refused or timed out.
    pub fn connect(addr: SocketAddr, timeout: Duration) -> Result<Self, ClientError> {
        Self::connect_with(&Connector::Plain, addr, timeout)
    }

    /// Connects through `connector` (over TLS, the handshake done).
    ///
    /// # Errors
    /// The connection was refused or timed out, or the handshake failed.
    pub fn connect_with(
        connector: &Connector,
        addr: SocketAddr,
        timeout: Duration,
    ) -> Result<Self, ClientError> {
        let stream = connector.connect(addr, timeout)?;
        Ok(Self {
            stream,
            buffered: Vec::new(),
            timeout,
            sent_at: Instant::now(),
        })
    }

    /// Changes how long a response may take.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Sends raw bytes (a request, several pipelined ones, or part of a body).
    ///
    /// # Errors
    /// The server closed or reset the connection, or stopped reading.
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        // Timed from before the write: the server may read the request and
        // start its wait while this thread is still returning from write(),
        // and a timestamp taken after it would make a wait look too short.
        let started = Instant::now();
        self.stream.write_all(bytes)?;
        self.sent_at = started;
        Ok(())
    }

    /// Sends `request` and reads its response.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub fn exchange(&mut self, request: &Request) -> Result<Response, ClientError> {
        self.send(&request.to_bytes())?;
        self.read_response_to(request.method)
    }

    /// Waits up to `wait` for the server to close the connection; true when
    /// it did (bytes that arrive instead count as not closed).
    pub fn closed_by_peer(&mut self, wait: Duration) -> bool {
        if self.stream.tcp().set_read_timeout(Some(wait)).is_err() {
            return false;
        }
        let mut byte = [0u8; 1];
        match self.stream.read(&mut byte) {
            Ok(0) => self.buffered.is_empty(),
            Err(e) => e.kind() == io::ErrorKind::ConnectionReset,
            Ok(_) => false,
        }
    }

    /// Reads the next response (to a request other than HEAD).
    ///
    /// # Errors
    /// See [`ClientError`].
    pub fn read_response(&mut self) -> Result<Response, ClientError> {
        self.read_response_to("GET")
    }

    /// Reads the next response to a request of `method`: the answer to a
    /// HEAD has no body, whatever length its headers announce.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub fn read_response_to(&mut self, method: &str) -> Result<Response, ClientError> {
        let deadline = Instant::now() + self.timeout;
        let (status, headers) = self.read_head(deadline)?;
        let framing = framing_of(&headers)?;
        let no_body = method.eq_ignore_ascii_case("HEAD")
            || status / 100 == 1
            || status == 204
            || status == 304;
        let body = match framing {
            _ if no_body => Vec::new(),
            (Framing::ContentLength, length) => self.read_exact_body(length, deadline)?,
            (Framing::Chunked, _) => self.read_chunked(deadline)?,
            (Framing::UntilClose | Framing::EndStream, _) => self.read_until_close(deadline)?,
        };
        Ok(Response {
            status,
            headers,
            body,
            framing: framing.0,
            elapsed: self.sent_at.elapsed(),
        })
    }

    fn read_head(
        &mut self,
        deadline: Instant,
    ) -> Result<(u16, Vec<(String, String)>), ClientError> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut response = httparse::Response::new(&mut headers);
            match response.parse(&self.buffered) {
                Ok(httparse::Status::Complete(head_bytes)) => {
                    let status = response.code.unwrap_or(0);
                    let headers = response
                        .headers
                        .iter()
                        .map(|h| {
                            (
                                h.name.to_owned(),
                                String::from_utf8_lossy(h.value).trim().to_owned(),
                            )
                        })
                        .collect();
                    self.buffered.drain(..head_bytes);
                    return Ok((status, headers));
                }
                Ok(httparse::Status::Partial) if self.buffered.len() > MAX_HEAD_BYTES => {
                    return Err(ClientError::Malformed(format!(
                        "a head longer than {MAX_HEAD_BYTES} bytes"
                    )));
                }
                Ok(httparse::Status::Partial) => {}
                Err(e) => {
                    return Err(ClientError::Malformed(format!(
                        "{e} in a head starting {:?}",
                        excerpt(&self.buffered)
                    )));
                }
            }
            if self.fill(deadline)? == 0 {
                let what = if self.buffered.is_empty() {
                    "before any response byte arrived".to_owned()
                } else {
                    format!(
                        "in the middle of the response head ({:?})",
                        excerpt(&self.buffered)
                    )
                };
                return Err(ClientError::Closed(what));
            }
        }
    }

    fn read_exact_body(
        &mut self,
        length: usize,
        deadline: Instant,
    ) -> Result<Vec<u8>, ClientError> {
        if length > MAX_BODY_BYTES {
            return Err(ClientError::Malformed(format!(
                "Content-Length {length} is absurdly large"
            )));
        }
        while self.buffered.len() < length {
            if self.fill(deadline)? == 0 {
                return Err(ClientError::Closed(format!(
                    "after {} of the {length} body bytes Content-Length announced",
                    self.buffered.len()
                )));
            }
        }
        Ok(self.buffered.drain(..length).collect())
    }

    fn read_until_close(&mut self, deadline: Instant) -> Result<Vec<u8>, ClientError> {
        while self.fill(deadline)? > 0 {
            if self.buffered.len() > MAX_BODY_BYTES {
                return Err(ClientError::Malformed("an endless body".to_owned()));
            }
        }
        Ok(std::mem::take(&mut self.buffered))
    }

    fn read_chunked(&mut self, deadline: Instant) -> Result<Vec<u8>, ClientError> {
        let mut body = Vec::new();
        loop {
            let size_line = self.read_line(deadline)?;
            let size_text = size_line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size_text, 16).map_err(|_| {
                ClientError::Malformed(format!("bad chunk size line {size_line:?}"))
            })?;
            if size == 0 {
                // Trailer fields, then the blank line.
                while !self.read_line(deadline)?.is_empty() {}
                return Ok(body);
            }
            if body.len() + size > MAX_BODY_BYTES {
                return Err(ClientError::Malformed(
                    "chunks beyond any sane body size".to_owned(),
                ));
            }
            body.extend(self.read_exact_body(size, deadline)?);
            if !self.read_line(deadline)?.is_empty() {
                return Err(ClientError::Malformed(
                    "a chunk longer than its size".to_owned(),
                ));
            }
        }
    }

    /// One CRLF-terminated line, without the CRLF.
    fn read_line(&mut self, deadline: Instant) -> Result<String, ClientError> {
        loop {
            if let Some(end) = self.buffered.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.buffered[..end]).into_owned();
                self.buffered.drain(..end + 2);
                return Ok(line);
            }
            if self.buffered.len() > MAX_HEAD_BYTES {
                return Err(ClientError::Malformed("an endless chunk line".to_owned()));
            }
            if self.fill(deadline)? == 0 {
                return Err(ClientError::Closed(
                    "in the middle of a chunked body".to_owned(),
                ));
            }
        }
    }

    /// Reads what is available into the buffer; 0 when the server closed.
    fn fill(&mut self, deadline: Instant) -> Result<usize, ClientError> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ClientError::Timeout(self.timeout));
        }
        self.stream.tcp().set_read_timeout(Some(left))?;
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(n) => {
                    self.buffered.extend_from_slice(&chunk[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(ClientError::Timeout(self.timeout));
                }
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return Ok(0),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// The framing the headers declare, and the length for `ContentLength`.
fn framing_of(headers: &[(String, String)]) -> Result<(Framing, usize), ClientError> {
    let named = |name: &'static str| {
        headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    if named("transfer-encoding").any(|v| v.to_ascii_lowercase().contains("chunked")) {
        return Ok((Framing::Chunked, 0));
    }
    let lengths: Vec<&str> = named("content-length").collect();
    match lengths.as_slice() {
        [] => Ok((Framing::UntilClose, 0)),
        [first, rest @ ..] if rest.iter().all(|v| v == first) => first
            .parse()
            .map(|length| (Framing::ContentLength, length))
            .map_err(|_| {
                ClientError::Malformed(format!("Content-Length {first:?} is not a number"))
            }),
        _ => Err(ClientError::Malformed(format!(
            "conflicting Content-Length headers {lengths:?}"
        ))),
    }
}
