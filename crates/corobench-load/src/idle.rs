//! Idle keep-alive connections, for memory per connection: each of N
//! connections sends one request, reads its whole response, and then stays
//! open and silent, so the server holds N connections and serves none.
//! What a server spends to hold a connection (a thread's stack, a
//! coroutine's, buffers) is then its resident memory divided out.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::error::{LoadError, Setting};
use crate::{SPARE_FDS, check_fd_limit};

/// The most bytes of one response head.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Open connections, each answered once; dropping them closes them all.
#[derive(Debug)]
pub struct IdleConnections {
    streams: Vec<TcpStream>,
}

impl IdleConnections {
    /// Opens `count` connections to `addr` one after another, each sending
    /// `request` (a whole HTTP/1.1 request, keep-alive) and reading its
    /// response, all within `timeout`.
    ///
    /// # Errors
    /// More connections than this process may open (the message says how
    /// many fit), a connection refused or cut, a response that is not 2xx,
    /// or `timeout` passing first.
    pub fn open(
        addr: SocketAddr,
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
                return Err(LoadError::config(
                    &[Setting::IdleConnections],
                    format!(
                        "only {index} of {count} idle connections were open and answered after \
                         {timeout:?}; the server accepts too slowly, or lower idle_connections"
                    ),
                ));
            }
            let stream = answered(addr, request, left).map_err(|e| {
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
    pub fn still_open(&self) -> usize {
        self.streams.iter().filter(|s| !closed_by_peer(s)).count()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }
}

/// One connection that sent `request` and read a 2xx response to its end.
fn answered(addr: SocketAddr, request: &[u8], timeout: Duration) -> io::Result<TcpStream> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.write_all(request)?;
    // The answer to a HEAD has no body, whatever length it announces.
    let head_only = request.starts_with(b"HEAD ");
    let answer = read_response(&mut stream, head_only)?;
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
    Ok(stream)
}

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
fn read_response(stream: &mut TcpStream, head_only: bool) -> io::Result<Answer> {
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
