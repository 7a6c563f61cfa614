//! A minimal raw HTTP client for the testkit's own tests: they must see the
//! bytes exactly as the servers send them.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Child;
use std::time::{Duration, Instant};

pub fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect to the test server");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
}

pub fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").into_bytes()
}

/// A response split into head text and body bytes.
#[derive(Debug)]
pub struct Raw {
    pub head: String,
    pub body: Vec<u8>,
}

impl Raw {
    pub fn status(&self) -> u16 {
        self.head[9..12].parse().unwrap()
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }
}

/// Reads one response framed by Content-Length (or to EOF without one).
pub fn read_response(stream: &mut TcpStream, pending: &mut Vec<u8>) -> Raw {
    let head_end = loop {
        if let Some(at) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        assert!(
            fill(stream, pending) > 0,
            "closed before a head: {pending:?}"
        );
    };
    let head = String::from_utf8_lossy(&pending[..head_end]).into_owned();
    pending.drain(..head_end);
    let raw = Raw {
        head,
        body: Vec::new(),
    };
    let body = match raw.header("content-length") {
        Some(length) => {
            let length: usize = length.parse().unwrap();
            while pending.len() < length {
                assert!(fill(stream, pending) > 0, "closed inside a body");
            }
            pending.drain(..length).collect()
        }
        None => {
            while fill(stream, pending) > 0 {}
            std::mem::take(pending)
        }
    };
    Raw { body, ..raw }
}

/// Sends `request` on `stream` and reads one response.
pub fn exchange(stream: &mut TcpStream, request: &[u8]) -> Raw {
    stream.write_all(request).unwrap();
    read_response(stream, &mut Vec::new())
}

/// Everything until the server closes.
pub fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut all = Vec::new();
    while fill(stream, &mut all) > 0 {}
    all
}

fn fill(stream: &mut TcpStream, into: &mut Vec<u8>) -> usize {
    let mut chunk = [0u8; 65536];
    match stream.read(&mut chunk) {
        Ok(n) => {
            into.extend_from_slice(&chunk[..n]);
            n
        }
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => 0,
        Err(e) => panic!("read failed: {e}"),
    }
}

/// A port free right now on 127.0.0.1.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Connects once the process listens (it may take a moment to start).
pub fn connect_when_ready(port: u16, child: &mut Child) -> std::net::TcpStream {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(stream) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            stream
                .set_read_timeout(Some(Duration::from_secs(20)))
                .unwrap();
            return stream;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the binary exited early"
        );
        assert!(
            Instant::now() < deadline,
            "the binary never listened on {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
