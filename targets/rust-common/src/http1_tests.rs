use super::*;

fn complete(buf: &[u8]) -> RequestHead {
    match parse_head(buf) {
        Ok(Parsed::Complete(head)) => head,
        other => panic!("expected a complete head, got {other:?}"),
    }
}

#[test]
fn parses_a_simple_get() {
    let raw = b"GET /io?ms=5 HTTP/1.1\r\nHost: x\r\n\r\n";
    let head = complete(raw);
    assert_eq!(head.route, Ok(Route::Io { wait_ms: 5 }));
    assert!(head.keep_alive);
    assert_eq!(head.body_len, 0);
    assert_eq!(head.head_len, raw.len());
}

#[test]
fn pipelined_requests_are_taken_one_at_a_time_in_order() {
    let buf =
        b"GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\nGET /json HTTP/1.1\r\nHost: x\r\n\r\nGET /st";
    let first = complete(buf);
    assert_eq!(first.route, Ok(Route::Plaintext));
    let rest = &buf[first.head_len..];
    let second = complete(rest);
    assert_eq!(second.route, Ok(Route::Json));
    assert_eq!(parse_head(&rest[second.head_len..]), Ok(Parsed::Partial));
}

#[test]
fn a_head_split_anywhere_is_partial_until_complete() {
    let full = b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n";
    for cut in 0..full.len() {
        assert_eq!(
            parse_head(&full[..cut]),
            Ok(Parsed::Partial),
            "cut at {cut}"
        );
    }
    let head = complete(full);
    assert_eq!(head.route, Ok(Route::Upload));
    assert_eq!(head.body_len, 3);
    assert_eq!(head.head_len, full.len());
}

#[test]
fn oversized_heads_are_431() {
    let mut buf = b"GET /plaintext HTTP/1.1\r\nX-Fill: ".to_vec();
    buf.resize(MAX_HEAD_BYTES + 10, b'a');
    assert_eq!(parse_head(&buf).unwrap_err().status(), 431);
    buf.extend_from_slice(b"\r\n\r\n");
    assert_eq!(parse_head(&buf).unwrap_err().status(), 431);
    let mut many = b"GET / HTTP/1.1\r\n".to_vec();
    for i in 0..=MAX_HEADERS {
        many.extend_from_slice(format!("X-{i}: y\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    assert_eq!(parse_head(&many).unwrap_err().status(), 431);
}

#[test]
fn garbage_is_400() {
    for garbage in [
        &b"\x16\x03\x01\x02\x00\x01\x00"[..],
        b"HELLO\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
    ] {
        let error = parse_head(garbage).unwrap_err();
        assert_eq!(error.status(), 400, "{garbage:?}");
        assert!(error.to_string().starts_with("malformed request"));
    }
}

#[test]
fn content_length_rules() {
    let with = |value: &str| {
        let raw = format!("POST /upload HTTP/1.1\r\nContent-Length: {value}\r\n\r\n");
        parse_head(raw.as_bytes())
    };
    assert_eq!(with("-1").unwrap_err().status(), 400);
    assert_eq!(with("12abc").unwrap_err().status(), 400);
    assert_eq!(with("67108865").unwrap_err().status(), 413);
    assert!(matches!(with("67108864"), Ok(Parsed::Complete(_))));
    let twice = b"POST /upload HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n";
    assert_eq!(parse_head(twice).unwrap_err().status(), 400);
    let chunked = b"POST /upload HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert_eq!(parse_head(chunked).unwrap_err().status(), 411);
}

#[test]
fn connection_and_expect_headers() {
    assert!(!complete(b"GET /json HTTP/1.1\r\nConnection: close\r\n\r\n").keep_alive);
    assert!(!complete(b"GET /json HTTP/1.0\r\n\r\n").keep_alive);
    assert!(complete(b"GET /json HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive);
    let expect =
        complete(b"POST /upload HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 9\r\n\r\n");
    assert!(expect.expects_continue);
    assert!(complete(b"HEAD /plaintext HTTP/1.1\r\n\r\n").head_only);
}

#[test]
fn route_errors_still_frame_the_request() {
    let head = complete(b"POST /plaintext HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody");
    assert_eq!(head.route.unwrap_err().status(), 405);
    assert_eq!(head.body_len, 4);
}

#[test]
fn response_head_carries_every_required_header() {
    let mut out = Vec::new();
    write_reply(&mut out, &Reply::plaintext(), "rust-compio", true, false);
    let text = String::from_utf8(out).expect("ascii");
    let (head, body) = text.split_once("\r\n\r\n").expect("blank line");
    let lines: Vec<&str> = head.split("\r\n").collect();
    assert_eq!(lines[0], "HTTP/1.1 200 OK");
    assert_eq!(lines[1], "Server: rust-compio");
    assert!(lines[2].starts_with("Date: ") && lines[2].ends_with(" GMT"));
    assert_eq!(lines[3], "Content-Type: text/plain; charset=utf-8");
    assert_eq!(lines[4], "Content-Length: 13");
    assert_eq!(lines.len(), 5);
    assert_eq!(body, "Hello, World!");
}

#[test]
fn closing_and_head_only_responses() {
    let mut out = Vec::new();
    let error = Reply::error(&ContractError::HeadTooLarge {
        limit_bytes: MAX_HEAD_BYTES,
    });
    write_reply(&mut out, &error, "s", false, false);
    let text = String::from_utf8(out).expect("ascii");
    assert!(text.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
    assert!(text.contains("\r\nConnection: close\r\n\r\n{\"error\":"));
    let mut head_only = Vec::new();
    write_reply(&mut head_only, &Reply::plaintext(), "s", true, true);
    assert!(head_only.ends_with(b"Content-Length: 13\r\n\r\n"));
}
