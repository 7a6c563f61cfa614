//! The connection's state machine against frames a test plays the server with.

use proptest::prelude::*;

use super::*;
use crate::h2::frame::{Head, flag, kind};

fn options(streams: u32) -> Http2Options {
    Http2Options {
        streams,
        ..Http2Options::default()
    }
}

fn get() -> H2Request {
    H2Request {
        block: vec![0x82, 0x86, 0x84],
        body: Vec::new(),
    }
}

fn request(sent_ns: u64) -> InFlight {
    InFlight {
        intended_ns: sent_ns,
        sent_ns,
        in_window: true,
    }
}

fn server_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    Head {
        len: u32::try_from(payload.len()).unwrap(),
        kind,
        flags,
        stream,
    }
    .write(&mut out);
    out.extend_from_slice(payload);
    out
}

fn settings(parameters: &[(u16, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::write_settings(&mut out, parameters);
    out
}

/// A connection that got the server's SETTINGS (with these parameters).
fn greeted(conn_options: Http2Options, parameters: &[(u16, u32)]) -> H2Conn {
    let mut conn = H2Conn::new(conn_options);
    conn.start();
    conn.receive(&settings(parameters), &get()).unwrap();
    conn.begin_write();
    conn
}

/// `:status 200` (static index 8), plus a literal the server indexes.
fn ok_block() -> Vec<u8> {
    let mut encoder = loona_hpack::Encoder::new();
    encoder.encode([
        (&b":status"[..], &b"200"[..]),
        (&b"server"[..], &b"testkit"[..]),
    ])
}

fn frames(bytes: &[u8]) -> Vec<Head> {
    let mut heads = Vec::new();
    let mut rest = bytes;
    while rest.len() >= 9 {
        let head = Head::parse(rest[..9].try_into().unwrap());
        heads.push(head);
        rest = &rest[9 + head.len as usize..];
    }
    heads
}

#[test]
fn the_preface_announces_settings_and_grows_the_connection_window() {
    let mut conn = H2Conn::new(Http2Options {
        stream_window: 1000,
        ..options(4)
    });
    conn.start();
    let len = conn.begin_write();
    let written = conn.writing()[..len].to_vec();
    assert!(written.starts_with(frame::PREFACE));
    let heads = frames(&written[frame::PREFACE.len()..]);
    assert_eq!(heads[0].kind, kind::SETTINGS);
    assert_eq!(heads[0].len, 12, "ENABLE_PUSH and INITIAL_WINDOW_SIZE");
    assert_eq!((heads[1].kind, heads[1].stream), (kind::WINDOW_UPDATE, 0));
    assert_eq!(conn.room(), 1, "one stream before the server's settings");
}

#[test]
fn a_lower_server_limit_lowers_the_streams_and_is_reported() {
    let mut conn = greeted(options(10), &[(setting::MAX_CONCURRENT_STREAMS, 3)]);
    assert_eq!(conn.take_events(), vec![Event::Limit(3)]);
    assert_eq!(conn.room(), 3);
    for at in 0..3 {
        assert!(conn.open_stream(request(at), &get()));
    }
    assert!(
        !conn.open_stream(request(9), &get()),
        "no room beyond the limit"
    );
    // The preface went out first, with the acknowledgement of the
    // server's settings; the streams' HEADERS follow.
    let acked = frames(&conn.writing()[frame::PREFACE.len()..]);
    assert!(
        acked
            .iter()
            .any(|h| h.kind == kind::SETTINGS && h.has(flag::ACK)),
        "the server's settings are acknowledged: {acked:?}"
    );
    let heads = frames(conn.pending());
    assert!(heads.iter().all(|h| h.kind == kind::HEADERS), "{heads:?}");
    let ids: Vec<u32> = heads.iter().map(|h| h.stream).collect();
    assert_eq!(ids, vec![1, 3, 5]);
}

/// The server answers stream `id` with headers only.
fn answer(conn: &mut H2Conn, id: u32) {
    let flags = flag::END_HEADERS | flag::END_STREAM;
    conn.receive(&server_frame(kind::HEADERS, flags, id, &ok_block()), &get())
        .unwrap();
}

#[test]
fn a_closed_loop_refills_once_an_eighth_of_the_streams_are_free() {
    let mut conn = greeted(options(16), &[]);
    assert!(conn.refill_due(), "nothing open: fill at once");
    for at in 0..16 {
        assert!(conn.open_stream(request(at), &get()));
    }
    assert!(!conn.refill_due(), "every stream busy");
    answer(&mut conn, 1);
    assert_eq!(conn.room(), 1);
    assert!(!conn.refill_due(), "one free of 16 is less than an eighth");
    answer(&mut conn, 3);
    assert!(conn.refill_due(), "two free of 16 is an eighth");
}

#[test]
fn a_refill_waits_for_at_least_one_free_stream_and_never_more_than_the_limit_allows() {
    let mut one = greeted(options(1), &[]);
    assert!(one.open_stream(request(0), &get()));
    assert!(!one.refill_due());
    answer(&mut one, 1);
    assert!(
        one.refill_due(),
        "a single stream refills as soon as it ends"
    );
    // The server allows 3 of the 100 asked: an eighth of 3 rounds up to one.
    let mut limited = greeted(options(100), &[(setting::MAX_CONCURRENT_STREAMS, 3)]);
    for at in 0..3 {
        assert!(limited.open_stream(request(at), &get()));
    }
    assert!(!limited.refill_due());
    answer(&mut limited, 3);
    assert!(limited.refill_due());
}

#[test]
fn a_response_split_byte_by_byte_completes_its_stream() {
    let mut conn = greeted(options(2), &[]);
    assert!(conn.open_stream(request(7), &get()));
    assert!(conn.open_stream(request(8), &get()));
    let mut bytes = server_frame(kind::HEADERS, flag::END_HEADERS, 3, &ok_block());
    bytes.extend(server_frame(
        kind::DATA,
        flag::END_STREAM,
        3,
        b"Hello, World!",
    ));
    for byte in &bytes {
        conn.receive(std::slice::from_ref(byte), &get()).unwrap();
    }
    assert_eq!(
        conn.take_events(),
        vec![Event::Response {
            request: request(8),
            status: 200
        }]
    );
    assert_eq!(conn.open(), 1);
    // The server's dynamic table entry is used by its next block.
    let mut encoder = loona_hpack::Encoder::new();
    let _ = encoder.encode([
        (&b":status"[..], &b"200"[..]),
        (&b"server"[..], &b"testkit"[..]),
    ]);
    let again = encoder.encode([
        (&b":status"[..], &b"404"[..]),
        (&b"server"[..], &b"testkit"[..]),
    ]);
    conn.receive(
        &server_frame(
            kind::HEADERS,
            flag::END_HEADERS | flag::END_STREAM,
            1,
            &again,
        ),
        &get(),
    )
    .unwrap();
    assert!(matches!(
        conn.take_events()[..],
        [Event::Response { status: 404, .. }]
    ));
}

#[test]
fn consumed_data_is_given_back_with_window_updates() {
    let mut conn = greeted(
        Http2Options {
            stream_window: 100,
            connection_window: frame::DEFAULT_WINDOW,
            ..options(1)
        },
        &[],
    );
    assert!(conn.open_stream(request(1), &get()));
    conn.begin_write();
    let mut bytes = server_frame(kind::HEADERS, flag::END_HEADERS, 1, &[0x88]);
    bytes.extend(server_frame(kind::DATA, 0, 1, &[b'x'; 60]));
    conn.receive(&bytes, &get()).unwrap();
    let updates = frames(conn.pending());
    assert_eq!(updates.len(), 1);
    assert_eq!(
        (updates[0].kind, updates[0].stream),
        (kind::WINDOW_UPDATE, 1)
    );
    assert_eq!(frame::u32_at(conn.pending(), 9), 60);
    // Beyond the window is a flow-control error of the connection.
    let error = conn
        .receive(&server_frame(kind::DATA, 0, 1, &[b'x'; 101]), &get())
        .unwrap_err();
    assert_eq!(error.code(), code::FLOW_CONTROL_ERROR);
}

#[test]
fn ping_is_answered_with_its_payload() {
    let mut conn = greeted(options(1), &[]);
    conn.receive(&server_frame(kind::PING, 0, 0, b"12345678"), &get())
        .unwrap();
    let pending = conn.pending();
    let head = Head::parse(pending[..9].try_into().unwrap());
    assert_eq!((head.kind, head.flags), (kind::PING, flag::ACK));
    assert_eq!(&pending[9..17], b"12345678");
}

#[test]
fn goaway_refuses_the_streams_above_its_last_and_lets_the_rest_finish() {
    let mut conn = greeted(options(3), &[]);
    for at in 0..3 {
        assert!(conn.open_stream(request(at), &get()));
    }
    let mut goaway = 1u32.to_be_bytes().to_vec();
    goaway.extend_from_slice(&0u32.to_be_bytes());
    conn.receive(&server_frame(kind::GOAWAY, 0, 0, &goaway), &get())
        .unwrap();
    let events = conn.take_events();
    assert_eq!(events[0], Event::GoAway);
    let refused = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Failed {
                    end: StreamEnd::Refused,
                    ..
                }
            )
        })
        .count();
    assert_eq!(refused, 2);
    assert!(conn.retiring() && conn.room() == 0);
    conn.receive(
        &server_frame(
            kind::HEADERS,
            flag::END_HEADERS | flag::END_STREAM,
            1,
            &[0x88],
        ),
        &get(),
    )
    .unwrap();
    assert_eq!(conn.open(), 0);
}

#[test]
fn resets_tell_refused_from_other_codes() {
    let mut conn = greeted(options(2), &[]);
    assert!(conn.open_stream(request(1), &get()));
    assert!(conn.open_stream(request(2), &get()));
    let mut bytes = server_frame(kind::RST_STREAM, 0, 1, &code::REFUSED_STREAM.to_be_bytes());
    bytes.extend(server_frame(
        kind::RST_STREAM,
        0,
        3,
        &code::CANCEL.to_be_bytes(),
    ));
    conn.receive(&bytes, &get()).unwrap();
    let ends: Vec<StreamEnd> = conn
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Failed { end, .. } => Some(end),
            _ => None,
        })
        .collect();
    assert_eq!(ends, vec![StreamEnd::Refused, StreamEnd::Reset]);
}

#[test]
fn malformed_frames_are_connection_errors_with_the_right_code() {
    let mut conn = H2Conn::new(options(1));
    let error = conn
        .receive(&server_frame(kind::PING, 0, 0, b"12345678"), &get())
        .unwrap_err();
    assert!(matches!(error, ConnError::Protocol { why, .. } if why.contains("first frame")));
    let mut conn = H2Conn::new(options(1));
    let error = conn
        .receive(&server_frame(kind::SETTINGS, 0, 0, &[0; 5]), &get())
        .unwrap_err();
    assert_eq!(error.code(), code::FRAME_SIZE_ERROR);
    let mut conn = H2Conn::new(options(1));
    let answer = b"HTTP/1.1 400 Bad Request\r\n\r\n";
    assert_eq!(conn.receive(answer, &get()), Err(ConnError::Http1Answer));
    let mut conn = greeted(options(1), &[]);
    let error = conn
        .receive(
            &server_frame(kind::PUSH_PROMISE, flag::END_HEADERS, 1, &[0; 4]),
            &get(),
        )
        .unwrap_err();
    assert_eq!(error.code(), code::PROTOCOL_ERROR);
}

/// A connection with `background` background streams that got the
/// server's SETTINGS (with these parameters).
fn greeted_with_background(streams: u32, background: u32, parameters: &[(u16, u32)]) -> H2Conn {
    let mut conn = H2Conn::with_background(options(streams), background);
    conn.start();
    conn.receive(&settings(parameters), &get()).unwrap();
    conn.begin_write();
    let _ = conn.take_events();
    conn
}

#[test]
fn background_streams_open_beside_the_measured_ones_and_end_apart() {
    let mut conn = H2Conn::with_background(options(2), 1);
    conn.start();
    assert_eq!(
        conn.background_room(),
        0,
        "none before the server's settings"
    );
    assert_eq!(conn.room(), 1);
    let mut conn = greeted_with_background(2, 1, &[]);
    assert_eq!((conn.background_room(), conn.room()), (1, 2));
    assert!(conn.open_background(request(1), &get()));
    assert!(!conn.open_background(request(2), &get()), "one asked for");
    assert_eq!(
        conn.room(),
        2,
        "the background stream takes no measured room"
    );
    assert!(conn.open_stream(request(3), &get()));
    assert!(conn.open_stream(request(4), &get()));
    assert_eq!((conn.open(), conn.open_with_background()), (2, 3));
    // The background stream (id 1) answers: its outcome is its own kind of
    // event, and a measured stream (id 3) answers as before.
    let mut bytes = server_frame(
        kind::HEADERS,
        flag::END_HEADERS | flag::END_STREAM,
        1,
        &ok_block(),
    );
    let mut encoder = loona_hpack::Encoder::new();
    let _ = encoder.encode([
        (&b":status"[..], &b"200"[..]),
        (&b"server"[..], &b"testkit"[..]),
    ]);
    let again = encoder.encode([
        (&b":status"[..], &b"200"[..]),
        (&b"server"[..], &b"testkit"[..]),
    ]);
    bytes.extend(server_frame(
        kind::HEADERS,
        flag::END_HEADERS | flag::END_STREAM,
        3,
        &again,
    ));
    conn.receive(&bytes, &get()).unwrap();
    assert_eq!(
        conn.take_events(),
        vec![
            Event::Background {
                request: request(1),
                outcome: Ok(200)
            },
            Event::Response {
                request: request(3),
                status: 200
            }
        ]
    );
    assert_eq!((conn.background_room(), conn.room()), (1, 1));
}

#[test]
fn a_server_limit_always_leaves_a_measured_stream() {
    let conn = greeted_with_background(4, 3, &[(setting::MAX_CONCURRENT_STREAMS, 1)]);
    assert_eq!(
        conn.background_room(),
        0,
        "the only stream is the measured one's"
    );
    assert_eq!(conn.room(), 1);
    let mut conn = greeted_with_background(4, 3, &[(setting::MAX_CONCURRENT_STREAMS, 3)]);
    assert_eq!(conn.background_room(), 2);
    assert!(conn.open_background(request(0), &get()));
    assert!(conn.open_background(request(0), &get()));
    assert_eq!(conn.room(), 1, "the limit's last stream is measured");
}

#[test]
fn background_streams_carry_no_body_and_time_out_as_their_own() {
    let post = H2Request {
        block: vec![0x83, 0x86, 0x84],
        body: vec![b'b'; 10],
    };
    let mut conn = greeted_with_background(1, 1, &[(setting::INITIAL_WINDOW_SIZE, 0)]);
    assert!(conn.open_background(request(0), &get()));
    conn.receive(
        &server_frame(kind::WINDOW_UPDATE, 0, 1, &4u32.to_be_bytes()),
        &post,
    )
    .unwrap();
    assert!(
        frames(conn.pending()).iter().all(|h| h.kind != kind::DATA),
        "the measured request's body never goes on a background stream"
    );
    conn.expire(1_000, 500, post.body.len());
    assert_eq!(
        conn.take_events(),
        vec![Event::Background {
            request: request(0),
            outcome: Err(StreamEnd::Timeout)
        }]
    );
    assert_eq!(conn.open_with_background(), 0);
}

#[test]
fn a_body_waits_for_windows_and_stalls_when_they_never_open() {
    let post = H2Request {
        block: vec![0x83, 0x86, 0x84],
        body: vec![b'b'; 10],
    };
    let mut conn = greeted(options(1), &[(setting::INITIAL_WINDOW_SIZE, 0)]);
    assert!(conn.open_stream(request(0), &post));
    let heads = frames(conn.pending());
    assert_eq!(heads.last().unwrap().kind, kind::HEADERS, "no DATA yet");
    conn.receive(
        &server_frame(kind::WINDOW_UPDATE, 0, 1, &4u32.to_be_bytes()),
        &post,
    )
    .unwrap();
    let data: Vec<Head> = frames(conn.pending())
        .into_iter()
        .filter(|h| h.kind == kind::DATA)
        .collect();
    assert_eq!((data.len(), data[0].len), (1, 4));
    assert!(!data[0].has(flag::END_STREAM));
    conn.expire(1_000, 500, post.body.len());
    assert_eq!(
        conn.take_events(),
        vec![Event::Failed {
            request: request(0),
            end: StreamEnd::Stalled
        }]
    );
}

#[test]
fn a_huge_header_block_in_continuations_decodes() {
    let mut conn = greeted(options(1), &[]);
    assert!(conn.open_stream(request(0), &get()));
    let mut encoder = loona_hpack::Encoder::new();
    let big = vec![b'v'; 200_000];
    let block = encoder.encode([(&b":status"[..], &b"200"[..]), (&b"x-big"[..], &big[..])]);
    let mut bytes = Vec::new();
    frame::write_headers(&mut bytes, 1, &block, true, 16_384);
    conn.receive(&bytes, &get()).unwrap();
    assert!(matches!(
        conn.take_events()[..],
        [Event::Response { status: 200, .. }]
    ));
}

/// Huffman-coded fields the server indexes, then the same fields again by
/// their dynamic-table index: each stream gets its own status.
#[test]
fn huffman_coded_and_indexed_statuses_reach_their_streams() {
    let mut encoder = httlib_hpack::Encoder::default();
    let indexed = httlib_hpack::Encoder::HUFFMAN_VALUE
        | httlib_hpack::Encoder::WITH_INDEXING
        | httlib_hpack::Encoder::BEST_FORMAT;
    let mut conn = greeted(options(3), &[]);
    for at in 0..3 {
        assert!(conn.open_stream(request(at), &get()));
    }
    for (stream, status) in [(1, "203"), (3, "203"), (5, "299")] {
        let mut block = Vec::new();
        for (name, value) in [(":status", status), ("server", "a server name")] {
            let field = (name.as_bytes().to_vec(), value.as_bytes().to_vec(), indexed);
            encoder.encode(field, &mut block).unwrap();
        }
        let headers = server_frame(
            kind::HEADERS,
            flag::END_HEADERS | flag::END_STREAM,
            stream,
            &block,
        );
        conn.receive(&headers, &get()).unwrap();
    }
    let statuses: Vec<u16> = conn
        .take_events()
        .into_iter()
        .filter_map(|event| match event {
            Event::Response { status, .. } => Some(status),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, vec![203, 203, 299]);
}

/// One header field, with how it is encoded.
fn field() -> impl Strategy<Value = (Vec<u8>, Vec<u8>, u8)> {
    let name = "[a-z:-]{1,12}".prop_map(String::into_bytes);
    let value = proptest::collection::vec(any::<u8>(), 0..40);
    let flags = prop_oneof![
        Just(0),
        Just(httlib_hpack::Encoder::HUFFMAN_NAME | httlib_hpack::Encoder::HUFFMAN_VALUE),
        Just(httlib_hpack::Encoder::WITH_INDEXING | httlib_hpack::Encoder::HUFFMAN_VALUE),
        Just(httlib_hpack::Encoder::WITH_INDEXING | httlib_hpack::Encoder::BEST_FORMAT),
        Just(httlib_hpack::Encoder::NEVER_INDEXED | httlib_hpack::Encoder::HUFFMAN_NAME),
    ];
    (name, value, flags)
}

proptest! {
    /// The generator's decoder reads any sequence of blocks (Huffman-coded
    /// or not, indexed in the dynamic table or not) as loona-hpack does.
    #[test]
    fn the_decoder_agrees_with_loona_hpack(
        blocks in proptest::collection::vec(proptest::collection::vec(field(), 0..8), 1..6)
    ) {
        let mut encoder = httlib_hpack::Encoder::default();
        let mut ours = crate::h2::hpack::HpackDecoder::new(4096);
        let mut theirs = loona_hpack::Decoder::new();
        for block in blocks {
            let mut bytes = Vec::new();
            for field in block {
                encoder.encode(field, &mut bytes).unwrap();
            }
            let expected: Vec<(Vec<u8>, Vec<u8>)> = theirs
                .decode(&bytes)
                .unwrap()
                .into_iter()
                .map(|(name, value)| (name.to_vec(), value.to_vec()))
                .collect();
            let mut got = Vec::new();
            ours.decode(&bytes, |name, value| got.push((name.to_vec(), value.to_vec())))
                .unwrap();
            prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn arbitrary_bytes_after_the_greeting_never_panic(
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..32)
    ) {
        let mut conn = greeted(options(4), &[]);
        for at in 0..4 {
            conn.open_stream(request(at), &get());
        }
        for chunk in chunks {
            if conn.receive(&chunk, &get()).is_err() {
                break;
            }
        }
        prop_assert!(conn.open() <= 4);
    }

    #[test]
    fn arbitrary_blocks_never_panic_the_decoder(
        blocks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 1..4)
    ) {
        let mut decoder = crate::h2::hpack::HpackDecoder::new(4096);
        for block in blocks {
            let _ = decoder.decode(&block, |_, _| {});
        }
    }

    #[test]
    fn arbitrary_header_blocks_never_panic(block in proptest::collection::vec(any::<u8>(), 0..256)) {
        let mut conn = greeted(options(1), &[]);
        conn.open_stream(request(0), &get());
        let mut bytes = Vec::new();
        frame::write_headers(&mut bytes, 1, &block, true, 16_384);
        let _ = conn.receive(&bytes, &get());
    }
}
