//! The knob server in its own process holds ten thousand keep-alive
//! connections (alone in this test binary: the client needs the descriptors).

mod common;

use std::io::Write;
use std::net::TcpStream;

use common::{get, read_response};
use corobench_testkit::{Knobs, TestProcess};

#[test]
fn ten_thousand_keep_alive_connections_are_served() {
    const CONNECTIONS: usize = 10_000;
    let server = TestProcess::start(&Knobs {
        body_bytes: Some(64),
        ..Knobs::default()
    })
    .unwrap();
    let mut streams: Vec<TcpStream> = (0..CONNECTIONS)
        .map(|i| {
            TcpStream::connect(server.addr()).unwrap_or_else(|e| panic!("connection {i}: {e}"))
        })
        .collect();
    for round in 0..2 {
        for stream in &mut streams {
            stream.write_all(&get("/")).unwrap();
        }
        for (i, stream) in streams.iter_mut().enumerate() {
            let response = read_response(stream, &mut Vec::new());
            assert_eq!(response.body.len(), 64, "round {round}, connection {i}");
        }
    }
    let threads = std::fs::read_to_string(format!("/proc/{}/status", server.pid()))
        .unwrap()
        .lines()
        .find_map(|line| {
            line.strip_prefix("Threads:")
                .map(|n| n.trim().parse::<u32>().unwrap())
        })
        .unwrap();
    assert!(threads <= 2, "one loop thread besides main, got {threads}");
}
