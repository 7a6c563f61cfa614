use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::path::PathBuf;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use sha2::{Digest, Sha256};

use super::*;
use crate::digest::hex_lower;

/// Runs a future whose awaits all complete at once (the mocks never wait).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut context = Context::from_waker(Waker::noop());
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
    }
}

/// Hands out the scripted segments one read at a time (split at `max`),
/// then the end of the stream; records every write.
#[derive(Default)]
struct ScriptedSocket {
    segments: VecDeque<Vec<u8>>,
    reads: usize,
    writes: Vec<Vec<u8>>,
}

impl ScriptedSocket {
    fn new(segments: &[&[u8]]) -> Self {
        Self {
            segments: segments.iter().map(|s| s.to_vec()).collect(),
            ..Self::default()
        }
    }

    fn written(&self) -> String {
        String::from_utf8_lossy(&self.writes.concat()).into_owned()
    }
}

impl Transport for ScriptedSocket {
    async fn read_append(&mut self, mut buf: Vec<u8>, max: usize) -> (io::Result<usize>, Vec<u8>) {
        self.reads += 1;
        let Some(mut segment) = self.segments.pop_front() else {
            return (Ok(0), buf);
        };
        if segment.len() > max {
            self.segments.push_front(segment.split_off(max));
        }
        buf.extend_from_slice(&segment);
        (Ok(segment.len()), buf)
    }

    async fn write_all(&mut self, buf: Vec<u8>) -> (io::Result<()>, Vec<u8>) {
        self.writes.push(buf.clone());
        (Ok(()), buf)
    }
}

struct MemoryFile {
    bytes: Vec<u8>,
    fail: bool,
}

impl UploadFile for MemoryFile {
    async fn write_all_at(&mut self, buf: Vec<u8>, offset_bytes: u64) -> (io::Result<()>, Vec<u8>) {
        if self.fail {
            return (Err(io::Error::other("disk full")), buf);
        }
        assert_eq!(
            offset_bytes,
            self.bytes.len() as u64,
            "writes are sequential"
        );
        self.bytes.extend_from_slice(&buf);
        (Ok(()), buf)
    }
}

#[derive(Default)]
struct MockEndpoints {
    fail_uploads: bool,
    removed: RefCell<Vec<(PathBuf, Vec<u8>)>>,
    slept_ms: RefCell<Vec<u32>>,
}

impl Endpoints for MockEndpoints {
    type File = MemoryFile;

    fn server_name(&self) -> &str {
        "mock"
    }

    fn upload_dir(&self) -> &Path {
        Path::new("/uploads")
    }

    fn model(&self) -> &'static str {
        "mock-model"
    }

    async fn sleep(&self, wait_ms: u32) {
        self.slept_ms.borrow_mut().push(wait_ms);
    }

    async fn read_payload(&self, len_bytes: usize) -> Result<Vec<u8>, ContractError> {
        Ok(vec![7; len_bytes])
    }

    async fn world(&self) -> Result<Reply, ContractError> {
        Err(crate::db::not_configured())
    }

    async fn create_upload(&self, _path: &Path) -> io::Result<MemoryFile> {
        Ok(MemoryFile {
            bytes: Vec::new(),
            fail: self.fail_uploads,
        })
    }

    async fn remove_upload(&self, file: MemoryFile, path: &Path) {
        self.removed
            .borrow_mut()
            .push((path.to_owned(), file.bytes));
    }
}

fn serve(socket: &mut ScriptedSocket, endpoints: &MockEndpoints) {
    block_on(serve_connection(socket, endpoints)).expect("no socket error");
}

/// The status codes of every response in `written`, in order.
fn statuses(written: &str) -> Vec<&str> {
    written
        .match_indices("HTTP/1.1 ")
        .map(|(at, _)| &written[at + 9..at + 12])
        .collect()
}

#[test]
fn pipelined_requests_are_answered_in_order_with_one_write() {
    let mut socket = ScriptedSocket::new(&[
        b"GET /json HTTP/1.1\r\n\r\nGET /plaintext HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\n",
    ]);
    serve(&mut socket, &MockEndpoints::default());
    assert_eq!(socket.writes.len(), 1, "one batch, one write");
    let written = socket.written();
    assert_eq!(statuses(&written), ["200", "200", "404"]);
    let json = written.find("Hello, World!\"}").expect("json body");
    let plain = written
        .rfind("\r\n\r\nHello, World!HTTP")
        .expect("plaintext body");
    assert!(json < plain);
}

#[test]
fn a_head_split_over_reads_is_answered_once() {
    let mut socket =
        ScriptedSocket::new(&[b"GET /pla", b"intext HTTP/1.1\r\nHo", b"st: x\r\n\r", b"\n"]);
    serve(&mut socket, &MockEndpoints::default());
    assert_eq!(statuses(&socket.written()).len(), 1);
    assert!(socket.written().ends_with("Hello, World!"));
}

#[test]
fn an_upload_across_reads_is_stored_hashed_and_removed_then_the_next_request_runs() {
    let body: Vec<u8> = (0..600_000u32).map(|i| (i % 11) as u8).collect();
    let mut first = format!(
        "POST /upload HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    first.extend_from_slice(&body[..100]);
    let mut last = body[400_000..].to_vec();
    last.extend_from_slice(b"GET /plaintext HTTP/1.1\r\n\r\n");
    let mut socket = ScriptedSocket::new(&[&first, &body[100..400_000], &last]);
    let endpoints = MockEndpoints::default();
    serve(&mut socket, &endpoints);
    let expected = format!(
        r#"{{"bytes":600000,"sha256":"{}"}}"#,
        hex_lower(&Sha256::digest(&body))
    );
    let written = socket.written();
    assert!(written.contains(&expected), "{written}");
    assert!(
        written.ends_with("Hello, World!"),
        "the pipelined request after the body"
    );
    let removed = endpoints.removed.borrow();
    assert_eq!(removed.len(), 1);
    assert!(removed[0].0.starts_with("/uploads"));
    assert_eq!(removed[0].1, body);
}

#[test]
fn a_failed_upload_write_is_500_and_closes() {
    let mut socket = ScriptedSocket::new(&[
        b"POST /upload HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        b"GET /json HTTP/1.1\r\n\r\n",
    ]);
    let endpoints = MockEndpoints {
        fail_uploads: true,
        ..MockEndpoints::default()
    };
    serve(&mut socket, &endpoints);
    let written = socket.written();
    assert_eq!(statuses(&written), ["500"]);
    assert!(written.contains("Connection: close") && written.contains("disk full"));
    assert_eq!(
        endpoints.removed.borrow().len(),
        1,
        "the file is removed all the same"
    );
}

#[test]
fn a_client_gone_mid_upload_ends_the_connection() {
    let mut socket =
        ScriptedSocket::new(&[b"POST /upload HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc"]);
    let endpoints = MockEndpoints::default();
    serve(&mut socket, &endpoints);
    assert!(
        socket
            .written()
            .contains("request body ended after 3 of 10 bytes")
    );
    assert_eq!(endpoints.removed.borrow().len(), 1);
}

#[test]
fn oversized_heads_and_garbage_are_answered_then_the_connection_closes() {
    let mut big = b"GET /plaintext HTTP/1.1\r\nX: ".to_vec();
    big.resize(crate::http1::MAX_HEAD_BYTES + 1, b'a');
    for (input, status) in [
        (big, "431"),
        (b"\x00\x01\x02garbage\r\n\r\n".to_vec(), "400"),
    ] {
        let mut socket = ScriptedSocket::new(&[&input, b"GET /json HTTP/1.1\r\n\r\n"]);
        serve(&mut socket, &MockEndpoints::default());
        let written = socket.written();
        assert_eq!(statuses(&written).len(), 1);
        assert!(
            written.starts_with(&format!("HTTP/1.1 {status} ")),
            "{written}"
        );
        assert!(written.contains("Connection: close"));
        assert_eq!(socket.segments.len(), 1, "nothing more is read");
    }
}

#[test]
fn bodies_of_other_endpoints_are_skipped_exactly() {
    let mut socket = ScriptedSocket::new(&[
        b"POST /json HTTP/1.1\r\nContent-Length: 4\r\n\r\nab",
        b"cdGET /json HTTP/1.1\r\n\r\n",
    ]);
    serve(&mut socket, &MockEndpoints::default());
    assert_eq!(statuses(&socket.written()), ["405", "200"]);
}

#[test]
fn large_bodies_are_sent_from_their_own_buffer() {
    let mut socket = ScriptedSocket::new(&[b"GET /file?kb=100 HTTP/1.1\r\n\r\n"]);
    serve(&mut socket, &MockEndpoints::default());
    assert_eq!(socket.writes.len(), 2, "head, then body");
    assert!(socket.writes[0].ends_with(b"Content-Length: 102400\r\n\r\n"));
    assert_eq!(socket.writes[1].len(), 102_400);
}

#[test]
fn expect_continue_is_answered_before_the_body_is_read() {
    let mut socket = ScriptedSocket::new(&[
        b"POST /upload HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n",
        b"hi",
    ]);
    serve(&mut socket, &MockEndpoints::default());
    assert_eq!(socket.writes[0], CONTINUE);
    assert!(socket.written().contains(r#""bytes":2"#));
}

#[test]
fn endpoints_compose_the_runtime_primitives() {
    let mut socket = ScriptedSocket::new(&[
        b"GET /io?ms=7 HTTP/1.1\r\n\r\nGET /mixed?iters=1&ms=3 HTTP/1.1\r\n\r\nGET /db HTTP/1.1\r\n\r\nGET /stats HTTP/1.1\r\n\r\n",
    ]);
    let endpoints = MockEndpoints::default();
    serve(&mut socket, &endpoints);
    assert_eq!(*endpoints.slept_ms.borrow(), [7, 3], "the waits, in order");
    let written = socket.written();
    assert_eq!(statuses(&written), ["200", "200", "503", "200"]);
    assert!(written.contains(r#"{"message":"Hello, World!","waited_ms":7}"#));
    assert!(written.contains("66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"));
    assert!(written.contains(r#"{"model":"mock-model","threads":"#));
}
