//! Idle keep-alive connections, for memory per connection: each of N
//! connections sends one request, reads its whole response, and then stays
//! open and silent, so the server holds N connections and serves none.
//! What a server spends to hold a connection (a thread's stack, a
//! coroutine's, buffers) is then its resident memory divided out. Over
//! TLS each connection completes its handshake and its one request inside
//! the session, so the server also holds that session's state and buffers.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::{ClientConnection, StreamOwned};

use crate::config::Endpoint;
use crate::error::{LoadError, Setting};
use crate::tls::{ThreadTls, TlsSetup};
use crate::{SPARE_FDS, check_fd_limit};

/// The most bytes of one response head.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// `index` of `count` connections were open and answered when `timeout`
/// ran out.
fn too_slow(index: u32, count: u32, timeout: Duration) -> LoadError {
    LoadError::config(
        &[Setting::IdleConnections],
        format!(
            "only {index} of {count} idle connections were open and answered after \
             {timeout:?}; the server accepts too slowly, or lower idle_connections"
        ),
    )
}

/// One idle connection: its socket, or its TLS session over the socket.
enum Held {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Held {
    fn socket(&self) -> &TcpStream {
        match self {
            Self::Plain(stream) => stream,
            Self::Tls(tls) => &tls.sock,
        }
    }

    /// Whether the server has closed it. Over TLS, bytes waiting on the
    /// socket may be a session ticket or the server's close_notify: they
    /// are read through the session to tell which.
    fn closed(&mut self) -> bool {
        match self {
            Self::Plain(stream) => closed_by_peer(stream),
            Self::Tls(tls) => closed_by_peer(&tls.sock) || tls_closed(tls),
        }
    }
}

/// Whether what waits on a TLS connection ends its session: a
/// close_notify, an alert or a cut. Reads without blocking.
fn tls_closed(tls: &mut StreamOwned<ClientConnection, TcpStream>) -> bool {
    if tls.sock.set_nonblocking(true).is_err() {
        return false;
    }
    let mut plaintext = [0_u8; 512];
    let read = tls.read(&mut plaintext);
    let _ = tls.sock.set_nonblocking(false);
    match read {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
        ),
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            Self::Plain(_) => "plain",
            Self::Tls(_) => "tls",
        };
        write!(f, "{kind} {:?}", self.socket())
    }
}

/// Open connections, each answered once; dropping them closes them all.
#[derive(Debug)]
pub struct IdleConnections {
    streams: Vec<Held>,
}

impl IdleConnections {
    /// Opens `count` cleartext connections to `addr`: see
    /// [`IdleConnections::open_to`].
    ///
    /// # Errors
    /// As [`IdleConnections::open_to`].
    pub fn open(
        addr: SocketAddr,
        request: &[u8],
        count: u32,
        timeout: Duration,
    ) -> Result<Self, LoadError> {
        Self::open_with(addr, None, request, count, timeout)
    }

    /// Opens `count` connections to `addr` one after another, each sending
    /// `request` (a whole HTTP/1.1 request, keep-alive) and reading its
    /// response, all within `timeout`. Over TLS when `endpoint` says so
    /// (an `https://` URL): its certificate check, versions, ciphers, SNI
    /// and ALPN, as the load's own connections use them.
    ///
    /// # Errors
    /// More connections than this process may open (the message says how
    /// many fit), a TLS setting that cannot work, a connection refused or
    /// cut, a handshake refused, a response that is not 2xx, or `timeout`
    /// passing first.
    pub fn open_to(
        addr: SocketAddr,
        endpoint: &Endpoint,
        request: &[u8],
        count: u32,
        timeout: Duration,
    ) -> Result<Self, LoadError> {
        let tls = match &endpoint.tls {
            Some(options) => Some(TlsSetup::new(options, endpoint.host_name())?.for_thread()),
            None => None,
        };
        Self::open_with(addr, tls.as_ref(), request, count, timeout)
    }

    fn open_with(
        addr: SocketAddr,
        tls: Option<&ThreadTls>,
        request: &[u8],
        count: u32,
        timeout: Duration,
    ) -> Result<Self, LoadError> {
        check_fd_limit(count).map_err(|e| match e {
            LoadError::FdLimit { needed, limit, .. } => LoadError::config(
                &[Setting::IdleConnections],
                format!(
                    "idle_connections = {count} needs about {needed} file descriptors, but this \
                     process may open {limit}: use at most {} or raise the hard limit \
                     (`ulimit -Hn`)",
                    limit.saturating_sub(SPARE_FDS)
                ),
            ),
            other => other,
        })?;
        let deadline = Instant::now() + timeout;
        let mut streams = Vec::with_capacity(count as usize);
        for index in 0..count {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(too_slow(index, count, timeout));
            }
            let stream = answered(addr, tls, request, left).map_err(|e| {
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) {
                    return too_slow(index, count, timeout);
                }
                LoadError::os(
                    format!("idle connection {} of {count} to {addr}", index + 1),
                    e,
                )
            })?;
            streams.push(stream);
        }
        Ok(Self { streams })
    }

    /// How many were opened.
    #[must_use]
    pub fn len(&self) -> usize {
        self.streams.len()
    }

    /// How many are still open now: a connection the server has closed
    /// (end of stream or reset waiting to be read) no longer costs it
    /// anything, so memory read with it gone is not memory per connection.
    #[must_use]
    pub fn still_open(&mut self) -> usize {
        self.streams
            .iter_mut()
            .map(Held::closed)
            .filter(|closed| !closed)
            .count()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }
}

/// One connection (over TLS with `tls`) that sent `request` and read a
/// 2xx response to its end.
fn answered(
    addr: SocketAddr,
    tls: Option<&ThreadTls>,
    request: &[u8],
    timeout: Duration,
) -> io::Result<Held> {
    let stream = TcpStream::connect_timeout(&addr, timeout)?;
    // A TLS session writes its last handshake message and the request
    // apart: with Nagle's algorithm the second waited for the server's
    // delayed ACK, 40 ms a connection.
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let mut held = match tls {
        None => Held::Plain(stream),
        Some(tls) => {
            let session = ClientConnection::new(Arc::clone(&tls.config), tls.server_name.clone())
                .map_err(io::Error::other)?;
            Held::Tls(Box::new(StreamOwned::new(session, stream)))
        }
    };
    // The answer to a HEAD has no body, whatever length it announces.
    let head_only = request.starts_with(b"HEAD ");
    let answer = match &mut held {
        Held::Plain(stream) => exchange(stream, request, head_only)?,
        // The handshake runs inside the first write.
        Held::Tls(stream) => exchange(stream.as_mut(), request, head_only)
            .map_err(|e| io::Error::new(e.kind(), format!("over TLS: {e}")))?,
    };
    if !(200..300).contains(&answer.status) {
        return Err(io::Error::other(format!(
            "the server answered {}, not 2xx; check the workload's path",
            answer.status
        )));
    }
    if answer.closes {
        return Err(io::Error::other(
            "the server closes each connection after its response (HTTP/1.0, or \
             Connection: close), so it holds no idle connection to measure; memory per \
             connection needs a server that keeps connections alive",
        ));
    }
    Ok(held)
}

/// Sends `request` on `stream` and reads its one response.
fn exchange(stream: &mut impl ReadWrite, request: &[u8], head_only: bool) -> io::Result<Answer> {
    stream.write_all(request)?;
    stream.flush()?;
    read_response(stream, head_only)
}

/// A byte stream both ways: a socket, or a TLS session over one.
trait ReadWrite: Read + Write {}

impl<T: Read + Write> ReadWrite for T {}

/// Whether the server has closed `stream`: a read that would not block
/// finds its end (or a reset). Nothing is consumed.
fn closed_by_peer(stream: &TcpStream) -> bool {
    let mut byte = [0_u8; 1];
    // SAFETY: a one-byte peek into a live buffer on an open socket; the
    // flags make it non-blocking whatever the socket's own mode.
    let read = unsafe {
        libc::recv(
            std::os::fd::AsRawFd::as_raw_fd(stream),
            byte.as_mut_ptr().cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    match read {
        0 => true,
        n if n > 0 => false,
        _ => {
            let error = io::Error::last_os_error();
            !matches!(
                error.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            )
        }
    }
}

/// What the one answer on an idle connection says.
struct Answer {
    status: u16,
    /// The server will close the connection after it: HTTP/1.0 without
    /// `Connection: keep-alive`, or `Connection: close`.
    closes: bool,
}

/// Reads one response with a `Content-Length` body (or, `head_only`,
/// none).
fn read_response(stream: &mut impl Read, head_only: bool) -> io::Result<Answer> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0_u8; 4096];
    loop {
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection before answering; an idle connection must \
                 stay open (keep-alive)",
            ));
        }
        buffer.extend_from_slice(&chunk[..read]);
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        let parsed = response
            .parse(&buffer)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if let httparse::Status::Complete(head) = parsed {
            let answer = Answer {
                status: response.code.unwrap_or(0),
                closes: closes_after(response.version, response.headers),
            };
            let length = if head_only {
                0
            } else {
                content_length(response.headers)?
            };
            while buffer.len() < head + length {
                let read = stream.read(&mut chunk)?;
                if read == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                buffer.extend_from_slice(&chunk[..read]);
            }
            return Ok(answer);
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a response head longer than 64 KiB",
            ));
        }
    }
}

/// Whether a response of HTTP/1.`version` with `headers` ends its connection.
fn closes_after(version: Option<u8>, headers: &[httparse::Header<'_>]) -> bool {
    let says = |token: &str| {
        headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case("connection"))
            .flat_map(|h| h.value.split(|b| *b == b','))
            .any(|value| value.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    };
    says("close") || (version == Some(0) && !says("keep-alive"))
}

fn content_length(headers: &[httparse::Header<'_>]) -> io::Result<usize> {
    let Some(header) = headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
    else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a response without Content-Length (idle connections read only such responses)",
        ));
    };
    std::str::from_utf8(header.value)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "a bad Content-Length"))
}
