//! Each knob of the test server, alone.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{connect, exchange, get, read_response, read_to_close};
use corobench_testkit::{Knobs, SlowAccept, SlowRead, Stall, TestServer};

#[test]
fn by_default_it_answers_hello_and_keeps_the_connection_alive() {
    let server = TestServer::start(Knobs::default());
    let mut stream = connect(server.addr());
    for _ in 0..3 {
        let response = exchange(&mut stream, &get("/anything"));
        assert_eq!(response.status(), 200);
        assert_eq!(response.body, b"Hello, World!");
        assert_eq!(response.header("connection"), None);
    }
    let counters = server.counters();
    assert_eq!(counters.connections_accepted, 1);
    assert_eq!(counters.requests_received, 3);
    assert_eq!(counters.responses_sent, 3);
    assert_eq!(counters.open_connections, 1);
}

#[test]
fn pipelined_requests_are_answered_in_order_and_bodies_skipped() {
    let server = TestServer::start(Knobs::default());
    let mut stream = connect(server.addr());
    let mut batch = b"POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello".to_vec();
    batch.extend(get("/b"));
    batch.extend(get("/c"));
    stream.write_all(&batch).unwrap();
    let mut pending = Vec::new();
    for _ in 0..3 {
        assert_eq!(
            read_response(&mut stream, &mut pending).body,
            b"Hello, World!"
        );
    }
    assert_eq!(server.counters().requests_received, 3);
}

#[test]
fn request_targets_are_kept_as_received_once_each() {
    let server = TestServer::start(Knobs::default());
    let mut stream = connect(server.addr());
    for target in ["/a?x=1", "/b%C3%A9", "/a?x=1"] {
        assert_eq!(exchange(&mut stream, &get(target)).status(), 200);
    }
    assert_eq!(server.request_targets(), ["/a?x=1", "/b%C3%A9"]);
}

#[test]
fn a_response_delay_holds_every_response() {
    let server = TestServer::start(Knobs {
        response_delay: Duration::from_millis(50),
        ..Knobs::default()
    });
    let mut stream = connect(server.addr());
    let started = Instant::now();
    exchange(&mut stream, &get("/"));
    assert!(started.elapsed() >= Duration::from_millis(50));
}

#[test]
fn an_on_demand_stall_holds_responses_then_releases_them_all() {
    let server = TestServer::start(Knobs::default());
    let handle = server.stall_handle();
    let stall_started = Instant::now();
    std::thread::spawn(move || handle.stall_for(Duration::from_millis(300)))
        .join()
        .unwrap();
    let mut streams: Vec<TcpStream> = (0..3).map(|_| connect(server.addr())).collect();
    for stream in &mut streams {
        stream.write_all(&get("/")).unwrap();
    }
    for stream in &mut streams {
        assert_eq!(read_response(stream, &mut Vec::new()).status(), 200);
        assert!(stall_started.elapsed() >= Duration::from_millis(300));
    }
    // After the stall, answers are immediate again (no lower bound to assert,
    // only that the server still answers).
    assert_eq!(exchange(&mut streams[0], &get("/")).status(), 200);
}

#[test]
fn a_scheduled_stall_begins_after_its_offset() {
    let before_start = Instant::now();
    let server = TestServer::start(Knobs {
        stall: Some(Stall {
            after: Duration::from_millis(200),
            length: Duration::from_millis(300),
        }),
        ..Knobs::default()
    });
    let after_start = Instant::now();
    let mut stream = connect(server.addr());
    // Before the window: answered.
    assert_eq!(exchange(&mut stream, &get("/")).status(), 200);
    std::thread::sleep(
        (after_start + Duration::from_millis(220)).saturating_duration_since(Instant::now()),
    );
    let sent_at = Instant::now();
    stream.write_all(&get("/")).unwrap();
    read_response(&mut stream, &mut Vec::new());
    if sent_at < before_start + Duration::from_millis(500) {
        // Sent inside the window, so held until its end.
        assert!(Instant::now() >= before_start + Duration::from_millis(500));
    } else {
        eprintln!("the machine was too slow to send inside the stall window; nothing to assert");
    }
}

#[test]
fn close_after_k_requests_announces_and_closes() {
    let server = TestServer::start(Knobs {
        close_after_requests: Some(2),
        ..Knobs::default()
    });
    let mut stream = connect(server.addr());
    let mut batch = get("/1");
    batch.extend(get("/2"));
    batch.extend(get("/3"));
    stream.write_all(&batch).unwrap();
    let mut pending = Vec::new();
    assert_eq!(
        read_response(&mut stream, &mut pending).header("connection"),
        None
    );
    let second = read_response(&mut stream, &mut pending);
    assert_eq!(second.header("connection").as_deref(), Some("close"));
    assert!(pending.is_empty());
    assert!(
        read_to_close(&mut stream).is_empty(),
        "nothing after the closing response"
    );
    assert_eq!(server.counters().responses_sent, 2);
}

#[test]
fn close_on_accept_answers_nothing() {
    let server = TestServer::start(Knobs {
        close_on_accept: true,
        ..Knobs::default()
    });
    for _ in 0..3 {
        let mut stream = connect(server.addr());
        let _ = stream.write_all(&get("/"));
        assert!(read_to_close(&mut stream).is_empty());
    }
    assert_eq!(server.counters().connections_accepted, 3);
    assert_eq!(server.counters().responses_sent, 0);
}

#[test]
fn chunked_bodies_carry_extensions_and_trailers() {
    let server = TestServer::start(Knobs {
        chunked: true,
        body_bytes: Some(10),
        ..Knobs::default()
    });
    let mut stream = connect(server.addr());
    stream.write_all(&get("/")).unwrap();
    // The response ends with the trailer; read until it arrives.
    let mut bytes = Vec::new();
    while !bytes.ends_with(b"X-Checksum: done\r\n\r\n") {
        let mut chunk = [0u8; 1024];
        let n = std::io::Read::read(&mut stream, &mut chunk).unwrap();
        assert!(n > 0, "closed early: {:?}", String::from_utf8_lossy(&bytes));
        bytes.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.contains("Transfer-Encoding: chunked\r\n"));
    assert!(text.ends_with("4;ext=\"x\";n=1\r\nabcd\r\n4;ext=\"x\";n=1\r\nefgh\r\n2\r\nij\r\n0\r\nX-Checksum: done\r\n\r\n"));
}

#[test]
fn garbage_is_not_http_and_closes() {
    let server = TestServer::start(Knobs {
        garbage: true,
        ..Knobs::default()
    });
    let mut stream = connect(server.addr());
    stream.write_all(&get("/")).unwrap();
    let bytes = read_to_close(&mut stream);
    assert!(!bytes.is_empty() && !bytes.starts_with(b"HTTP/"));
}

#[test]
fn truncated_bodies_fall_short_of_their_content_length() {
    let server = TestServer::start(Knobs {
        truncate: true,
        ..Knobs::default()
    });
    let mut stream = connect(server.addr());
    stream.write_all(&get("/")).unwrap();
    let text = String::from_utf8(read_to_close(&mut stream)).unwrap();
    assert!(text.contains("Content-Length: 113\r\n"));
    assert!(text.ends_with("\r\n\r\nHello, World!"));
}

#[test]
fn status_and_body_size_are_set_by_knobs() {
    let server = TestServer::start(Knobs {
        status: 404,
        body_bytes: Some(100_000),
        ..Knobs::default()
    });
    let mut stream = connect(server.addr());
    let response = exchange(&mut stream, &get("/"));
    assert_eq!(response.status(), 404);
    assert!(response.head.starts_with("HTTP/1.1 404 Not Found\r\n"));
    assert_eq!(response.body.len(), 100_000);
    assert!(response.body.starts_with(b"abcdefghijklmnopqrstuvwxyza"));
}

#[test]
fn slow_reads_take_a_few_bytes_at_a_time() {
    let server = TestServer::start(Knobs {
        slow_read: Some(SlowRead {
            bytes_per_read: 50,
            pause: Duration::from_millis(5),
            receive_buffer_bytes: Some(4096),
        }),
        ..Knobs::default()
    });
    let mut stream = connect(server.addr());
    let body = vec![b'x'; 2000];
    let mut request =
        format!("POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    request.extend(&body);
    let started = Instant::now();
    let response = exchange(&mut stream, &request);
    assert_eq!(response.body, b"Hello, World!");
    // At least (bytes / bytes_per_read - 1) pauses passed before the request was whole.
    let reads = request.len().div_ceil(50) as u32;
    assert!(started.elapsed() >= Duration::from_millis(5) * (reads - 1));
}

#[test]
fn thousands_of_idle_keep_alive_connections_are_served_by_one_thread() {
    // Client and server share this process's descriptors, so stay well
    // below the limit (the binary's knob mode serves 10,000 from outside).
    const CONNECTIONS: usize = 3000;
    let server = TestServer::start(Knobs::default());
    let mut streams: Vec<TcpStream> = (0..CONNECTIONS).map(|_| connect(server.addr())).collect();
    for stream in &mut streams {
        stream.write_all(&get("/")).unwrap();
    }
    for stream in &mut streams {
        assert_eq!(read_response(stream, &mut Vec::new()).status(), 200);
    }
    let counters = server.counters();
    assert_eq!(counters.open_connections, CONNECTIONS as u64);
    assert_eq!(counters.responses_sent, CONNECTIONS as u64);
}

#[test]
fn dropping_the_server_closes_its_connections_and_port() {
    let server = TestServer::start(Knobs::default());
    let addr = server.addr();
    let mut stream = connect(addr);
    exchange(&mut stream, &get("/"));
    drop(server);
    assert!(read_to_close(&mut stream).is_empty());
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn slow_accepts_hold_the_first_connections_then_accept_the_rest() {
    let pause = Duration::from_millis(50);
    let server = TestServer::start(Knobs {
        slow_accept: Some(SlowAccept {
            connections: 3,
            pause,
        }),
        ..Knobs::default()
    });
    let began = Instant::now();
    // The kernel completes every handshake at once; the requests wait.
    let mut streams: Vec<TcpStream> = (0..4).map(|_| connect(server.addr())).collect();
    for stream in &mut streams {
        stream.write_all(&get("/")).unwrap();
    }
    for stream in &mut streams[..3] {
        assert_eq!(read_response(stream, &mut Vec::new()).status(), 200);
    }
    assert!(
        began.elapsed() >= pause * 3,
        "three slow accepts took {:?}",
        began.elapsed()
    );
    assert_eq!(
        read_response(&mut streams[3], &mut Vec::new()).status(),
        200
    );
    assert_eq!(server.counters().connections_accepted, 4);
}
