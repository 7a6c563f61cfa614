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

/// How one generated response ends its body.
#[derive(Clone, Debug)]
enum BodySpec {
    /// `Content-Length` and these bytes.
    Length(Vec<u8>),
    /// `Transfer-Encoding: chunked`.
    Chunked(ChunkedSpec),
    /// A 204 or 304, which carries no body (a 304 with a `Content-Length`).
    Bodiless(u16),
}

#[derive(Clone, Debug)]
struct ChunkedSpec {
    /// Each chunk: its data, its extension, hex digits in upper case, leading zeros.
    chunks: Vec<(Vec<u8>, &'static str, bool, usize)>,
    /// Extension of the last (empty) chunk.
    last_extension: &'static str,
    trailers: usize,
}

/// One generated response, possibly after an interim `100 Continue`.
#[derive(Clone, Debug)]
struct ResponseSpec {
    interim: bool,
    status: u16,
    http10: bool,
    close: bool,
    body: BodySpec,
}

impl ChunkedSpec {
    fn write(&self, out: &mut Vec<u8>) {
        for (data, extension, upper, zeros) in &self.chunks {
            let size = if *upper {
                format!("{:X}", data.len())
            } else {
                format!("{:x}", data.len())
            };
            out.extend_from_slice(
                format!("{}{size}{extension}\r\n", "0".repeat(*zeros)).as_bytes(),
            );
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("0{}\r\n", self.last_extension).as_bytes());
        for i in 0..self.trailers {
            out.extend_from_slice(format!("X-Trailer-{i}: value {i}\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
    }
}

impl ResponseSpec {
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.interim {
            out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        let (status, framing) = match &self.body {
            BodySpec::Length(body) => (self.status, format!("Content-Length: {}\r\n", body.len())),
            BodySpec::Chunked(_) => (self.status, "Transfer-Encoding: chunked\r\n".to_string()),
            BodySpec::Bodiless(status) => (*status, "Content-Length: 5\r\n".to_string()),
        };
        let version = if self.http10 { "1.0" } else { "1.1" };
        let connection = match (self.http10, self.close) {
            (_, true) => "Connection: close\r\n",
            (true, false) => "Connection: keep-alive\r\n",
            (false, false) => "",
        };
        out.extend_from_slice(
            format!("HTTP/{version} {status} X\r\nServer: t\r\n{framing}{connection}\r\n")
                .as_bytes(),
        );
        match &self.body {
            BodySpec::Length(body) => out.extend_from_slice(body),
            BodySpec::Chunked(chunked) => chunked.write(&mut out),
            BodySpec::Bodiless(_) => {}
        }
        out
    }

    /// The (status, keep-alive) the framer must report for this response.
    fn expected(&self) -> (u16, bool) {
        let status = match self.body {
            BodySpec::Bodiless(status) => status,
            _ => self.status,
        };
        (status, !self.close)
    }
}

fn chunked_spec() -> impl Strategy<Value = ChunkedSpec> {
    let extension = prop_oneof![
        Just(""),
        Just(";a=b"),
        Just(";flag"),
        Just(" ;q=\"x;y\""),
        Just("\t;n=v;m"),
    ];
    let chunk = (
        proptest::collection::vec(any::<u8>(), 1..300),
        extension.clone(),
        any::<bool>(),
        0usize..4,
    );
    (proptest::collection::vec(chunk, 0..6), extension, 0usize..3).prop_map(
        |(chunks, last_extension, trailers)| ChunkedSpec {
            chunks,
            last_extension,
            trailers,
        },
    )
}

fn response_spec() -> impl Strategy<Value = ResponseSpec> {
    let body = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..300).prop_map(BodySpec::Length),
        chunked_spec().prop_map(BodySpec::Chunked),
        prop_oneof![Just(204u16), Just(304u16)].prop_map(BodySpec::Bodiless),
    ];
    let status = prop_oneof![Just(200u16), Just(201), Just(301), Just(404), Just(503)];
    (any::<bool>(), status, any::<bool>(), any::<bool>(), body).prop_map(
        |(interim, status, http10, close, body)| ResponseSpec {
            interim,
            status,
            http10,
            close,
            body,
        },
    )
}

/// Feeds `bytes` cut at `cuts` (positions in it, any order), feeding each
/// piece's rest again after every completed response, as a connection does.
/// Returns, for each completed response, where in `bytes` it ended, its
/// status and whether it keeps the connection alive.
fn frame_at_cuts(bytes: &[u8], cuts: &[usize]) -> Result<Vec<(usize, u16, bool)>, TestCaseError> {
    let mut ends: Vec<usize> = cuts.iter().map(|&c| c.min(bytes.len())).collect();
    ends.push(bytes.len());
    ends.sort_unstable();
    let mut framer = ResponseFramer::new(false);
    let mut done = Vec::new();
    let mut at = 0;
    for end in ends {
        while at < end {
            match framer.feed(&bytes[at..end]) {
                Ok(Feed::Complete {
                    consumed,
                    status,
                    keep_alive,
                }) => {
                    prop_assert!(consumed > 0 && at + consumed <= end, "consumed {consumed}");
                    at += consumed;
                    done.push((at, status, keep_alive));
                }
                Ok(Feed::NeedMore) => at = end,
                Err(malformed) => {
                    return Err(TestCaseError::fail(format!("{malformed} at byte {at}")));
                }
            }
        }
    }
    prop_assert!(framer.is_idle(), "bytes of a response left over");
    Ok(done)
}

/// Where each response of `specs` ends in their concatenation, with what
/// the framer must report for it.
fn expected_framing(specs: &[ResponseSpec]) -> (Vec<u8>, Vec<(usize, u16, bool)>) {
    let mut bytes = Vec::new();
    let mut expected = Vec::new();
    for spec in specs {
        bytes.extend(spec.bytes());
        let (status, keep_alive) = spec.expected();
        expected.push((bytes.len(), status, keep_alive));
    }
    (bytes, expected)
}

fn cut_points() -> impl Strategy<Value = Vec<proptest::sample::Index>> {
    proptest::collection::vec(any::<proptest::sample::Index>(), 0..16)
}

proptest! {
    #[test]
    fn pipelined_responses_are_each_framed_once_in_order(
        specs in proptest::collection::vec(response_spec(), 1..8),
        cuts in cut_points(),
    ) {
        let (bytes, expected) = expected_framing(&specs);
        let cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        prop_assert_eq!(frame_at_cuts(&bytes, &cuts)?, expected);
    }

    #[test]
    fn chunked_bodies_are_framed_exactly_wherever_they_are_split(
        chunked in chunked_spec(),
        after in response_spec(),
        cuts in cut_points(),
    ) {
        let spec = ResponseSpec {
            interim: false,
            status: 200,
            http10: false,
            close: false,
            body: BodySpec::Chunked(chunked),
        };
        // A response right behind shows the chunked one ended at its last byte.
        let (bytes, expected) = expected_framing(&[spec, after]);
        let cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        prop_assert_eq!(frame_at_cuts(&bytes, &cuts)?, expected.clone());
        // Fed one byte at a time, too.
        let every_byte: Vec<usize> = (1..bytes.len()).collect();
        prop_assert_eq!(frame_at_cuts(&bytes, &every_byte)?, expected);
    }
}
