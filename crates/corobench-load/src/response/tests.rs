use proptest::prelude::*;

use super::*;

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nServer: t\r\n\r\nHello, World!";
const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
    5;name=value\r\nHello\r\n8\r\n, World!\r\n0\r\nX-Trailer: yes\r\n\r\n";

/// Feeds `bytes` in pieces of `piece` bytes and returns every completed response.
fn feed_in_pieces(framer: &mut ResponseFramer, bytes: &[u8], piece: usize) -> Vec<(u16, bool)> {
    let mut done = Vec::new();
    for part in bytes.chunks(piece.max(1)) {
        let mut rest = part;
        while let Feed::Complete {
            consumed,
            status,
            keep_alive,
        } = framer.feed(rest).unwrap()
        {
            done.push((status, keep_alive));
            rest = &rest[consumed..];
        }
    }
    done
}

#[test]
fn content_length_response_in_one_piece() {
    let mut framer = ResponseFramer::new(false);
    let feed = framer.feed(OK).unwrap();
    assert_eq!(
        feed,
        Feed::Complete {
            consumed: OK.len(),
            status: 200,
            keep_alive: true
        }
    );
    assert!(framer.is_idle());
}

#[test]
fn every_split_point_gives_the_same_response() {
    for response in [OK, CHUNKED] {
        for piece in 1..response.len() {
            let mut framer = ResponseFramer::new(false);
            assert_eq!(
                feed_in_pieces(&mut framer, response, piece),
                vec![(200, true)],
                "piece {piece}"
            );
        }
    }
}

#[test]
fn back_to_back_responses_are_framed_separately() {
    let mut both = OK.to_vec();
    both.extend_from_slice(CHUNKED);
    let mut framer = ResponseFramer::new(false);
    let Feed::Complete { consumed, .. } = framer.feed(&both).unwrap() else {
        panic!("incomplete")
    };
    assert_eq!(consumed, OK.len());
    let Feed::Complete { consumed, .. } = framer.feed(&both[OK.len()..]).unwrap() else {
        panic!("second incomplete")
    };
    assert_eq!(consumed, CHUNKED.len());
}

#[test]
fn connection_close_and_http10_end_keep_alive() {
    let mut framer = ResponseFramer::new(false);
    let close = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
    assert!(matches!(
        framer.feed(close).unwrap(),
        Feed::Complete {
            keep_alive: false,
            ..
        }
    ));
    let http10 = b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
    assert!(matches!(
        framer.feed(http10).unwrap(),
        Feed::Complete {
            keep_alive: false,
            ..
        }
    ));
    let http10_keep = b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n";
    assert!(matches!(
        framer.feed(http10_keep).unwrap(),
        Feed::Complete {
            keep_alive: true,
            ..
        }
    ));
}

#[test]
fn bodiless_responses() {
    let mut framer = ResponseFramer::new(false);
    let no_content = b"HTTP/1.1 204 No Content\r\nContent-Length: 99\r\n\r\n";
    assert!(matches!(
        framer.feed(no_content).unwrap(),
        Feed::Complete { status: 204, .. }
    ));
    let mut head = ResponseFramer::new(true);
    assert!(matches!(
        head.feed(&OK[..OK.len() - 13]).unwrap(),
        Feed::Complete { status: 200, .. }
    ));
}

#[test]
fn interim_response_is_skipped() {
    let mut bytes = b"HTTP/1.1 100 Continue\r\n\r\n".to_vec();
    bytes.extend_from_slice(OK);
    let mut framer = ResponseFramer::new(false);
    assert_eq!(
        framer.feed(&bytes).unwrap(),
        Feed::Complete {
            consumed: bytes.len(),
            status: 200,
            keep_alive: true
        }
    );
}

#[test]
fn body_until_close() {
    let mut framer = ResponseFramer::new(false);
    let bytes = b"HTTP/1.0 200 OK\r\n\r\nsome body";
    assert_eq!(framer.feed(bytes).unwrap(), Feed::NeedMore);
    assert_eq!(framer.finish_at_eof(), Some(200));
    assert!(framer.is_idle());
    assert_eq!(ResponseFramer::new(false).finish_at_eof(), None);
}

#[test]
fn malformed_inputs_are_named() {
    let cases: [(&[u8], Malformed); 9] = [
        (b"garbage garbage\r\n\r\n", Malformed::Head),
        (
            b"HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n",
            Malformed::Status,
        ),
        (
            b"HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n",
            Malformed::Status,
        ),
        (
            b"HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n",
            Malformed::Status,
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
            Malformed::ContentLength,
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            Malformed::ContentLength,
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            Malformed::ChunkSize,
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX",
            Malformed::ChunkFraming,
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
            Malformed::ChunkSize,
        ),
    ];
    for (bytes, expected) in cases {
        assert_eq!(
            ResponseFramer::new(false).feed(bytes),
            Err(expected),
            "{}",
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn oversized_head_is_refused_without_growing() {
    let mut framer = ResponseFramer::new(false);
    framer.feed(b"HTTP/1.1 200 OK\r\n").unwrap();
    let filler = vec![b'a'; 1024];
    let mut result = Ok(Feed::NeedMore);
    for _ in 0..100 {
        result = framer.feed(&filler);
        if result.is_err() {
            break;
        }
    }
    assert_eq!(result, Err(Malformed::HeadTooLarge));
    assert!(framer.partial_head.len() <= MAX_HEAD_BYTES);
}

#[test]
fn head_split_then_body_in_one_large_read() {
    // A head split across reads, followed by a body far larger than a head may be.
    let mut framer = ResponseFramer::new(false);
    let body_len = 200 * 1024;
    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {body_len}\r\n\r\n");
    assert_eq!(framer.feed(&head.as_bytes()[..10]).unwrap(), Feed::NeedMore);
    let mut rest = head.as_bytes()[10..].to_vec();
    rest.extend(std::iter::repeat_n(b'x', body_len));
    assert!(
        matches!(framer.feed(&rest).unwrap(), Feed::Complete { consumed, .. } if consumed == rest.len())
    );
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_or_grow_unbounded(
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..4096), 0..40)
    ) {
        let mut framer = ResponseFramer::new(false);
        for chunk in &chunks {
            let mut rest: &[u8] = chunk;
            loop {
                match framer.feed(rest) {
                    Ok(Feed::Complete { consumed, .. }) => {
                        prop_assert!(consumed <= rest.len());
                        rest = &rest[consumed..];
                        if rest.is_empty() { break; }
                    }
                    Ok(Feed::NeedMore) => break,
                    Err(_) => { framer.reset(); break; }
                }
            }
            prop_assert!(framer.partial_head.len() <= MAX_HEAD_BYTES);
        }
    }

    #[test]
    fn valid_responses_frame_the_same_in_any_pieces(piece in 1usize..200, chunked in any::<bool>()) {
        let bytes = if chunked { CHUNKED } else { OK };
        let mut framer = ResponseFramer::new(false);
        prop_assert_eq!(feed_in_pieces(&mut framer, bytes, piece), vec![(200, true)]);
    }

    #[test]
    fn arbitrary_prefix_after_valid_head_never_panics(tail in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        bytes.extend_from_slice(&tail);
        let _ = ResponseFramer::new(false).feed(&bytes);
    }
}
