//! A blocking HTTP/1.1 client for the targets' integration tests: it sends
//! raw bytes (pipelined, split, malformed) and frames the answers itself.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A guard against a hung test, not a timing assertion.
const READ_GUARD: Duration = Duration::from_secs(20);

/// One framed response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A byte stream the client talks over: a TCP socket, or a TLS session on one.
pub trait Duplex: Read + Write + Send {}

impl<T: Read + Write + Send> Duplex for T {}

/// A connection plus the bytes received but not yet framed.
pub struct TestClient {
    stream: Box<dyn Duplex>,
    pending: Vec<u8>,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("pending_bytes", &self.pending.len())
            .finish_non_exhaustive()
    }
}

/// A TCP connection to `address`, with Nagle off and a guard against a
/// server that never answers.
pub fn connect_tcp(address: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(address).expect("connect to the test server");
    stream
        .set_read_timeout(Some(READ_GUARD))
        .expect("read timeout");
    stream.set_nodelay(true).expect("nodelay");
    stream
}

impl TestClient {
    pub fn connect(address: SocketAddr) -> Self {
        Self::over(connect_tcp(address))
    }

    /// A client over an already connected stream (a TLS session, say).
    pub fn over(stream: impl Duplex + 'static) -> Self {
        Self {
            stream: Box::new(stream),
            pending: Vec::new(),
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream
            .write_all(bytes)
            .expect("write to the test server");
    }

    /// The next response.
    pub fn response(&mut self) -> Response {
        self.framed(false)
    }

    /// The next response to a `HEAD` (no body, whatever its length says).
    pub fn head_response(&mut self) -> Response {
        self.framed(true)
    }

    /// Asserts the server sent nothing more and closed the connection.
    pub fn assert_closed(&mut self) {
        assert!(
            self.pending.is_empty(),
            "unexpected bytes after the last response"
        );
        let mut rest = Vec::new();
        self.stream.read_to_end(&mut rest).expect("read to end");
        assert!(
            rest.is_empty(),
            "server kept talking: {:?}",
            String::from_utf8_lossy(&rest)
        );
    }

    fn framed(&mut self, head_only: bool) -> Response {
        loop {
            if let Some(response) = self.take_response(head_only) {
                return response;
            }
            let mut chunk = [0u8; 65536];
            let read = self
                .stream
                .read(&mut chunk)
                .expect("read from the test server");
            assert!(read > 0, "connection closed before a full response");
            self.pending.extend_from_slice(&chunk[..read]);
        }
    }

    fn take_response(&mut self, head_only: bool) -> Option<Response> {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut parsed = httparse::Response::new(&mut headers);
        let httparse::Status::Complete(head_len) =
            parsed.parse(&self.pending).expect("valid response head")
        else {
            return None;
        };
        let status = parsed.code.expect("status code");
        let headers: Vec<(String, String)> = parsed
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_owned(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect();
        let mut response = Response {
            status,
            headers,
            body: Vec::new(),
        };
        let declared: usize = response
            .header("content-length")
            .map_or(0, |v| v.parse().expect("length"));
        let body_len = if status == 100 || head_only {
            0
        } else {
            declared
        };
        if self.pending.len() < head_len + body_len {
            return None;
        }
        response.body = self.pending[head_len..head_len + body_len].to_vec();
        self.pending.drain(..head_len + body_len);
        Some(response)
    }
}
