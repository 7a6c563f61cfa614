//! One connection of the contract server: read a request head, hand the
//! route its body, write the reply with the headers the contract asks for
//! (minus those a fault removes), repeat while the connection is kept alive.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};

use std::sync::Arc;

use rustls::{ServerConnection, StreamOwned};
use std::time::{Duration, Instant, SystemTime};

use super::{Fault, Shared, routes};
use crate::http::{Parsed, RequestHead, http_date, parse_request, write_head};

/// A request head may not grow beyond this before it is complete.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// How long a closing connection drains what the client still sends.
const LINGER: Duration = Duration::from_secs(2);

/// A response as a route produces it; headers are added on the way out.
#[derive(Debug)]
pub(super) struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// Close the connection after this reply (e.g. a `413` whose body was not read).
    pub close: bool,
}

impl Reply {
    pub fn text(body: &str) -> Self {
        Self::with(200, "text/plain", body.as_bytes().to_vec())
    }

    pub fn json(value: &serde_json::Value) -> Self {
        Self::with(200, "application/json", value.to_string().into_bytes())
    }

    pub fn error(status: u16, message: &str) -> Self {
        let body = serde_json::json!({ "error": message }).to_string();
        Self::with(status, "application/json", body.into_bytes())
    }

    pub fn with(status: u16, content_type: &'static str, body: Vec<u8>) -> Self {
        Self {
            status,
            content_type,
            body,
            close: false,
        }
    }
}

/// A request body: first the bytes read along with the head, then the
/// socket (over HTTP/2: nothing, the whole body was read first).
pub(super) struct Body<'a> {
    buffered: &'a mut Vec<u8>,
    stream: &'a mut dyn Read,
    remaining: u64,
}

impl std::fmt::Debug for Body<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Body")
            .field("buffered", &self.buffered.len())
            .field("remaining", &self.remaining)
            .finish_non_exhaustive()
    }
}

impl<'a> Body<'a> {
    /// `declared` bytes: those `buffered`, then the rest from `stream`.
    pub fn new(buffered: &'a mut Vec<u8>, stream: &'a mut dyn Read, declared: u64) -> Self {
        Self {
            buffered,
            stream,
            remaining: declared,
        }
    }

    pub fn declared_bytes(&self) -> u64 {
        self.remaining
    }
}

impl Read for Body<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let want = usize::try_from(self.remaining)
            .unwrap_or(usize::MAX)
            .min(out.len());
        if want == 0 {
            return Ok(0);
        }
        let n = if self.buffered.is_empty() {
            let n = self.stream.read(&mut out[..want])?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            n
        } else {
            let n = want.min(self.buffered.len());
            out[..n].copy_from_slice(&self.buffered[..n]);
            self.buffered.drain(..n);
            n
        };
        self.remaining -= n as u64;
        Ok(n)
    }
}

/// A connection's bytes: the socket itself, or TLS over it.
pub(super) trait Wire: Read + Write + std::fmt::Debug {
    fn socket(&self) -> &TcpStream;
}

impl Wire for TcpStream {
    fn socket(&self) -> &TcpStream {
        self
    }
}

impl Wire for StreamOwned<ServerConnection, TcpStream> {
    fn socket(&self) -> &TcpStream {
        &self.sock
    }
}

pub(super) fn serve_connection(mut stream: TcpStream, shared: &Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    // `alloc_per_conn`: a buffer written through (so every page is
    // resident) and held while the connection lives.
    let held = std::hint::black_box(vec![0x5a_u8; shared.config.alloc_per_conn]);
    let (mut wire, h2): (Box<dyn Wire>, bool) = match &shared.config.tls {
        None => {
            let h2 = shared.config.http2 && sends_preface(&stream);
            (Box::new(stream), h2)
        }
        Some(config) => {
            let Ok(mut conn) = ServerConnection::new(Arc::clone(config)) else {
                return;
            };
            while conn.is_handshaking() {
                if conn.complete_io(&mut stream).is_err() {
                    return;
                }
            }
            let h2 = conn.alpn_protocol() == Some(b"h2");
            (Box::new(StreamOwned::new(conn, stream)), h2)
        }
    };
    if h2 {
        let _ = super::h2::serve(wire.as_mut(), shared);
        drop(held);
        return;
    }
    if matches!(serve(wire.as_mut(), shared), Ok(Ending::Close)) {
        linger_close(wire.as_mut());
    }
    drop(held);
}

/// Cleartext: whether the client's first bytes are the HTTP/2 preface
/// (h2c by prior knowledge) rather than an HTTP/1.1 request.
fn sends_preface(stream: &TcpStream) -> bool {
    let mut first = [0u8; 3];
    loop {
        match stream.peek(&mut first) {
            Ok(n) if n >= 3 || n == 0 => return n == 3 && first == *b"PRI",
            Ok(_) => std::thread::sleep(Duration::from_millis(1)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Ending {
    /// The client closed; nothing more to do.
    PeerClosed,
    /// We close: half-close, then drain.
    Close,
}

fn serve(stream: &mut dyn Wire, shared: &Shared) -> io::Result<Ending> {
    let mut buffered = Vec::new();
    // FrozenDate: the first Date this connection sent, repeated.
    let mut frozen_date = None;
    loop {
        let head = match read_head(stream, &mut buffered)? {
            None => return Ok(Ending::PeerClosed),
            Some(Ok(head)) => head,
            Some(Err(problem)) => {
                let reply = Reply::error(400, &format!("malformed request: {problem}"));
                write_reply(stream, &reply, (true, false), shared, &mut frozen_date)?;
                return Ok(Ending::Close);
            }
        };
        shared.wait_turn();
        let reply = answer(&head, stream, &mut buffered, shared)?;
        let close = reply.close
            || head.connection_close
            || shared.has(Fault::NoKeepAlive)
            || shared.has(Fault::MissingContentLength);
        let head_only = head.method == "HEAD";
        write_reply(stream, &reply, (close, head_only), shared, &mut frozen_date)?;
        if close {
            return Ok(Ending::Close);
        }
        if shared.has(Fault::NoPipelining) {
            buffered.clear();
        }
    }
}

/// Routes the request and consumes whatever of its body the route left.
fn answer(
    head: &RequestHead,
    stream: &mut dyn Wire,
    buffered: &mut Vec<u8>,
    shared: &Shared,
) -> io::Result<Reply> {
    if head.chunked {
        let mut reply = Reply::error(
            411,
            "chunked request bodies are not accepted: send Content-Length",
        );
        reply.close = true;
        return Ok(reply);
    }
    let mut body = Body {
        buffered,
        stream,
        remaining: head.content_length,
    };
    let reply = routes::route(head, &mut body, shared);
    if !reply.close {
        io::copy(&mut body, &mut io::sink())?;
    }
    Ok(reply)
}

/// The next request head, `None` when the client closed cleanly between
/// requests, or the parser's complaint.
fn read_head(
    stream: &mut dyn Wire,
    buffered: &mut Vec<u8>,
) -> io::Result<Option<Result<RequestHead, String>>> {
    let mut chunk = [0u8; 8192];
    loop {
        if !buffered.is_empty() {
            match parse_request(buffered) {
                Parsed::Complete(head) => {
                    buffered.drain(..head.head_bytes);
                    return Ok(Some(Ok(head)));
                }
                Parsed::Invalid(problem) => return Ok(Some(Err(problem))),
                Parsed::Partial if buffered.len() > MAX_HEAD_BYTES => {
                    return Ok(Some(Err(format!(
                        "head longer than {MAX_HEAD_BYTES} bytes"
                    ))));
                }
                Parsed::Partial => {}
            }
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(None);
        }
        buffered.extend_from_slice(&chunk[..n]);
    }
}

/// Writes `reply`; `head_only` (the answer to a HEAD) sends its head alone,
/// announcing the length the body would have.
fn write_reply(
    stream: &mut dyn Wire,
    reply: &Reply,
    (close, head_only): (bool, bool),
    shared: &Shared,
    frozen_date: &mut Option<String>,
) -> io::Result<()> {
    let mut headers: Vec<(&str, String)> = Vec::with_capacity(6);
    if !shared.has(Fault::MissingServer) {
        headers.push(("Server", shared.config.target_name.clone()));
    }
    if !shared.has(Fault::MissingDate) {
        let now = http_date(SystemTime::now());
        let date = if shared.has(Fault::FrozenDate) {
            frozen_date.get_or_insert(now).clone()
        } else {
            now
        };
        headers.push(("Date", date));
    }
    if !shared.has(Fault::MissingContentType) {
        headers.push(("Content-Type", reply.content_type.to_owned()));
    }
    let chunked = shared.has(Fault::Chunked);
    if chunked {
        headers.push(("Transfer-Encoding", "chunked".to_owned()));
    } else if !shared.has(Fault::MissingContentLength) {
        headers.push(("Content-Length", reply.body.len().to_string()));
    }
    if close {
        headers.push(("Connection", "close".to_owned()));
    }
    let mut out = Vec::with_capacity(reply.body.len() + 256);
    write_head(&mut out, reply.status, &headers);
    if head_only {
        return stream.write_all(&out);
    }
    if chunked {
        if !reply.body.is_empty() {
            out.extend_from_slice(format!("{:x}\r\n", reply.body.len()).as_bytes());
            out.extend_from_slice(&reply.body);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
    } else {
        out.extend_from_slice(&reply.body);
    }
    stream.write_all(&out)?;
    stream.flush()
}

/// Half-closes, then reads until the client closes (or a deadline), so that
/// unread request bytes do not turn the close into a reset that could
/// destroy the reply in flight.
fn linger_close(stream: &mut dyn Wire) {
    let _ = stream.socket().shutdown(Shutdown::Write);
    let deadline = Instant::now() + LINGER;
    let mut sink = [0u8; 64 * 1024];
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if left.is_zero() || stream.socket().set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}
