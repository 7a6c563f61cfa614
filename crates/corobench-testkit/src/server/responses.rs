//! The response bytes a [`Knobs`] setting sends, serialised once.

use crate::http::write_head;
use crate::knobs::Knobs;

/// Pre-serialised responses: every response is one of these.
#[derive(Debug)]
pub(crate) struct Responses {
    /// Any response but the last one on a connection.
    pub ordinary: Vec<u8>,
    /// The last response before the server closes (`Connection: close`).
    pub closing: Vec<u8>,
    /// The server closes the connection after each response (garbage, truncated).
    pub close_after_each: bool,
}

impl Responses {
    pub fn new(knobs: &Knobs) -> Self {
        if knobs.garbage {
            let garbage = b"this is not HTTP at all \x00\x01\x02\r\n\r\n".to_vec();
            return Self {
                ordinary: garbage.clone(),
                closing: garbage,
                close_after_each: true,
            };
        }
        let body = knobs.body();
        if knobs.truncate {
            let truncated = serialise(knobs, &body, Framing::Truncated, true);
            return Self {
                ordinary: truncated.clone(),
                closing: truncated,
                close_after_each: true,
            };
        }
        let framing = if knobs.chunked {
            Framing::Chunked
        } else {
            Framing::ContentLength
        };
        Self {
            ordinary: serialise(knobs, &body, framing, false),
            closing: serialise(knobs, &body, framing, true),
            close_after_each: false,
        }
    }
}

#[derive(Clone, Copy)]
enum Framing {
    ContentLength,
    Chunked,
    /// `Content-Length` promises more bytes than follow.
    Truncated,
}

fn serialise(knobs: &Knobs, body: &[u8], framing: Framing, closing: bool) -> Vec<u8> {
    let mut headers = vec![
        ("Server", "corobench-testkit".to_owned()),
        ("Content-Type", "text/plain".to_owned()),
    ];
    match framing {
        Framing::ContentLength => headers.push(("Content-Length", body.len().to_string())),
        Framing::Truncated => headers.push(("Content-Length", (body.len() + 100).to_string())),
        Framing::Chunked => {
            headers.push(("Transfer-Encoding", "chunked".to_owned()));
            headers.push(("Trailer", "X-Checksum".to_owned()));
        }
    }
    if closing {
        headers.push(("Connection", "close".to_owned()));
    }
    let mut out = Vec::with_capacity(body.len() + 256);
    write_head(&mut out, knobs.status, &headers);
    match framing {
        Framing::Chunked => write_chunked(&mut out, body),
        Framing::ContentLength | Framing::Truncated => out.extend_from_slice(body),
    }
    out
}

/// Up to three non-empty chunks, the first two with extensions, then the
/// last chunk and a trailer field.
fn write_chunked(out: &mut Vec<u8>, body: &[u8]) {
    let part = body.len().div_ceil(3).max(1);
    for (index, chunk) in body.chunks(part).enumerate() {
        let extension = if index < 2 { ";ext=\"x\";n=1" } else { "" };
        out.extend_from_slice(format!("{:x}{extension}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\nX-Checksum: done\r\n\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    #[test]
    fn chunked_bodies_have_extensions_and_a_trailer() {
        let knobs = Knobs {
            chunked: true,
            ..Knobs::default()
        };
        let response = text(&Responses::new(&knobs).ordinary);
        assert!(response.contains("Transfer-Encoding: chunked\r\n"));
        assert!(response.ends_with(
            "\r\n\r\n5;ext=\"x\";n=1\r\nHello\r\n5;ext=\"x\";n=1\r\n, Wor\r\n3\r\nld!\r\n0\r\nX-Checksum: done\r\n\r\n"
        ));
    }

    #[test]
    fn truncated_responses_promise_more_than_they_send() {
        let knobs = Knobs {
            truncate: true,
            ..Knobs::default()
        };
        let responses = Responses::new(&knobs);
        assert!(responses.close_after_each);
        let response = text(&responses.ordinary);
        assert!(response.contains("Content-Length: 113\r\n"));
        assert!(response.ends_with("\r\n\r\nHello, World!"));
    }

    #[test]
    fn the_closing_response_says_so_and_status_and_size_apply() {
        let knobs = Knobs {
            status: 503,
            body_bytes: Some(30),
            ..Knobs::default()
        };
        let responses = Responses::new(&knobs);
        let ordinary = text(&responses.ordinary);
        assert!(ordinary.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
        assert!(ordinary.contains("Content-Length: 30\r\n"));
        assert!(ordinary.ends_with("abcdefghijklmnopqrstuvwxyzabcd"));
        assert!(!ordinary.contains("Connection: close"));
        assert!(text(&responses.closing).contains("Connection: close\r\n"));
    }
}
