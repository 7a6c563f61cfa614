//! Incremental HTTP/1.x response framing.
//!
//! The generator only needs to know where a response ends, its status and
//! whether the connection stays open; it never keeps a body. Bytes are fed as
//! they arrive, in pieces of any size. The head is parsed with `httparse`
//! straight from the caller's buffer when it arrives whole, and only a head
//! split across reads is copied (into a buffer bounded by [`MAX_HEAD_BYTES`]).

use std::fmt;

/// A response head larger than this is malformed (and never buffered further).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Longest chunk-size line or trailer line accepted in a chunked body.
const MAX_CHUNK_LINE_BYTES: usize = 4096;
/// Headers parsed per response; more is malformed.
const MAX_HEADERS: usize = 64;
/// The status codes HTTP defines classes for (RFC 9110 §15); any other
/// three digits (`000`, `600`, `999`) make the response malformed.
const VALID_STATUS: std::ops::RangeInclusive<u16> = 100..=599;

/// Why bytes are not an acceptable HTTP/1.x response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    Head,
    /// A status code outside 100–599: three digits, but no HTTP status.
    Status,
    HeadTooLarge,
    TooManyHeaders,
    ContentLength,
    ChunkSize,
    ChunkFraming,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Head => "not an HTTP/1.x response head",
            Self::Status => "status code outside 100-599",
            Self::HeadTooLarge => "response head larger than 64 KiB",
            Self::TooManyHeaders => "more than 64 response headers",
            Self::ContentLength => "invalid Content-Length",
            Self::ChunkSize => "invalid chunk size",
            Self::ChunkFraming => "invalid chunked framing",
        })
    }
}

/// What feeding bytes produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feed {
    /// Every byte was consumed; the response is not complete yet.
    NeedMore,
    /// A response completed after `consumed` bytes of this input.
    Complete {
        consumed: usize,
        status: u16,
        keep_alive: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Body {
    /// Exactly this many bytes remain.
    Length(u64),
    Chunked(Chunk),
    /// The body runs until the server closes the connection.
    UntilClose,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chunk {
    /// Reading the hex size; `digits` seen so far; `ext` once past a `;`.
    Size {
        size: u64,
        digits: u32,
        ext: bool,
        line: usize,
    },
    /// Expecting the LF that ends the size line.
    SizeLf {
        size: u64,
    },
    Data(u64),
    DataCr,
    DataLf,
    /// After the last chunk: trailer lines until an empty line. `line` bytes seen.
    Trailer {
        line: usize,
        cr: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Head,
    Body(Body),
}

/// Frames responses on one connection.
#[derive(Debug)]
pub struct ResponseFramer {
    state: State,
    /// Bytes of a head that did not arrive in one piece.
    partial_head: Vec<u8>,
    status: u16,
    keep_alive: bool,
    /// The request was HEAD: responses carry no body.
    head_request: bool,
}

impl ResponseFramer {
    #[must_use]
    pub fn new(head_request: bool) -> Self {
        Self {
            state: State::Head,
            partial_head: Vec::new(),
            status: 0,
            keep_alive: true,
            head_request,
        }
    }

    /// Forgets any partial response (the connection was closed or reset).
    pub fn reset(&mut self) {
        self.state = State::Head;
        self.partial_head.clear();
    }

    /// True when no byte of a response has been seen since the last one completed.
    #[must_use]
    pub fn is_idle(&self) -> bool {
        self.state == State::Head && self.partial_head.is_empty()
    }

    /// Feeds bytes. Returns at the first completed response; the caller feeds
    /// the rest (`&bytes[consumed..]`) again if it expects more.
    ///
    /// # Errors
    /// When the bytes cannot be an HTTP/1.x response.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Feed, Malformed> {
        let mut offset = 0;
        loop {
            let rest = &bytes[offset..];
            match self.state {
                State::Head => match self.feed_head(rest)? {
                    Some(used) => offset += used,
                    None => return Ok(Feed::NeedMore),
                },
                State::Body(body) => {
                    let (used, done) = self.feed_body(body, rest)?;
                    offset += used;
                    if done {
                        self.state = State::Head;
                        return Ok(Feed::Complete {
                            consumed: offset,
                            status: self.status,
                            keep_alive: self.keep_alive,
                        });
                    }
                    if offset == bytes.len() {
                        return Ok(Feed::NeedMore);
                    }
                }
            }
        }
    }

    /// The server closed the connection. Returns the response this completes
    /// (a body delimited by the close), if any.
    #[must_use]
    pub fn finish_at_eof(&mut self) -> Option<u16> {
        if self.state == State::Body(Body::UntilClose) {
            self.state = State::Head;
            return Some(self.status);
        }
        None
    }

    /// Consumes head bytes; `Some(used)` once the head is complete (the state
    /// has then moved on to the body), `None` when more bytes are needed.
    fn feed_head(&mut self, bytes: &[u8]) -> Result<Option<usize>, Malformed> {
        if self.partial_head.is_empty() {
            if let Some(len) = self.parse_head(bytes)? {
                return Ok(Some(len));
            }
            self.stash_partial(bytes)?;
            return Ok(None);
        }
        // Join only as many bytes as a head may still need: the rest of the
        // input may be body bytes, which are never copied.
        let before = self.partial_head.len();
        let take = bytes.len().min(MAX_HEAD_BYTES - before);
        self.partial_head.extend_from_slice(&bytes[..take]);
        let joined = std::mem::take(&mut self.partial_head);
        let parsed = self.parse_head(&joined);
        self.partial_head = joined;
        match parsed? {
            Some(len) => {
                self.partial_head.clear();
                Ok(Some(len - before))
            }
            None if self.partial_head.len() >= MAX_HEAD_BYTES => Err(Malformed::HeadTooLarge),
            None => Ok(None),
        }
    }

    fn stash_partial(&mut self, bytes: &[u8]) -> Result<(), Malformed> {
        if self.partial_head.len() + bytes.len() > MAX_HEAD_BYTES {
            return Err(Malformed::HeadTooLarge);
        }
        self.partial_head.extend_from_slice(bytes);
        Ok(())
    }

    /// Parses a complete head at the start of `bytes`; `None` if incomplete.
    fn parse_head(&mut self, bytes: &[u8]) -> Result<Option<usize>, Malformed> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let len = match response.parse(bytes) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => {
                if bytes.len() > MAX_HEAD_BYTES {
                    return Err(Malformed::HeadTooLarge);
                }
                return Ok(None);
            }
            Err(httparse::Error::TooManyHeaders) => return Err(Malformed::TooManyHeaders),
            Err(_) => return Err(Malformed::Head),
        };
        let status = response.code.ok_or(Malformed::Head)?;
        if !VALID_STATUS.contains(&status) {
            return Err(Malformed::Status);
        }
        let http11 = response.version == Some(1);
        let framing = HeadFraming::read(response.headers, http11)?;
        self.status = status;
        self.keep_alive = framing.keep_alive;
        self.state = self.body_state(status, &framing);
        Ok(Some(len))
    }

    fn body_state(&self, status: u16, framing: &HeadFraming) -> State {
        let no_body = self.head_request || status == 204 || status == 304;
        if (100..200).contains(&status) && status != 101 {
            // An interim response: the final one follows on the same stream.
            return State::Head;
        }
        if no_body {
            return State::Body(Body::Length(0));
        }
        if framing.chunked {
            return State::Body(Body::Chunked(Chunk::Size {
                size: 0,
                digits: 0,
                ext: false,
                line: 0,
            }));
        }
        match framing.content_length {
            Some(length) => State::Body(Body::Length(length)),
            None => State::Body(Body::UntilClose),
        }
    }

    /// Consumes body bytes; returns (bytes used, response complete).
    fn feed_body(&mut self, body: Body, bytes: &[u8]) -> Result<(usize, bool), Malformed> {
        match body {
            Body::Length(remaining) => {
                let take = remaining.min(bytes.len() as u64);
                let left = remaining - take;
                self.state = State::Body(Body::Length(left));
                Ok((usize::try_from(take).unwrap_or(usize::MAX), left == 0))
            }
            Body::UntilClose => Ok((bytes.len(), false)),
            Body::Chunked(chunk) => self.feed_chunked(chunk, bytes),
        }
    }

    fn feed_chunked(&mut self, mut chunk: Chunk, bytes: &[u8]) -> Result<(usize, bool), Malformed> {
        let mut i = 0;
        while i < bytes.len() {
            if let Chunk::Data(remaining) = chunk {
                let take = remaining.min((bytes.len() - i) as u64);
                i += usize::try_from(take).unwrap_or(usize::MAX);
                chunk = if remaining == take {
                    Chunk::DataCr
                } else {
                    Chunk::Data(remaining - take)
                };
                continue;
            }
            let (next, done) = step_chunk(chunk, bytes[i])?;
            i += 1;
            if done {
                return Ok((i, true));
            }
            chunk = next;
        }
        self.state = State::Body(Body::Chunked(chunk));
        Ok((i, false))
    }
}

/// Advances the chunked-body state machine by one byte (never in `Data`).
/// Returns the next state and whether the whole body just ended.
fn step_chunk(chunk: Chunk, byte: u8) -> Result<(Chunk, bool), Malformed> {
    let next = match chunk {
        Chunk::Size {
            size,
            digits,
            ext,
            line,
        } => {
            if line >= MAX_CHUNK_LINE_BYTES {
                return Err(Malformed::ChunkSize);
            }
            match byte {
                b'\r' if digits > 0 => Chunk::SizeLf { size },
                b';' | b' ' | b'\t' if digits > 0 => Chunk::Size {
                    size,
                    digits,
                    ext: true,
                    line: line + 1,
                },
                _ if ext => Chunk::Size {
                    size,
                    digits,
                    ext,
                    line: line + 1,
                },
                _ => {
                    let digit = hex_value(byte).ok_or(Malformed::ChunkSize)?;
                    if digits >= 15 {
                        return Err(Malformed::ChunkSize);
                    }
                    Chunk::Size {
                        size: size * 16 + digit,
                        digits: digits + 1,
                        ext,
                        line: line + 1,
                    }
                }
            }
        }
        Chunk::SizeLf { size } => match (byte, size) {
            (b'\n', 0) => Chunk::Trailer { line: 0, cr: false },
            (b'\n', _) => Chunk::Data(size),
            _ => return Err(Malformed::ChunkFraming),
        },
        Chunk::DataCr if byte == b'\r' => Chunk::DataLf,
        Chunk::DataLf if byte == b'\n' => Chunk::Size {
            size: 0,
            digits: 0,
            ext: false,
            line: 0,
        },
        Chunk::Trailer { line, cr } => match (byte, cr) {
            (b'\r', false) => Chunk::Trailer { line, cr: true },
            (b'\n', true) if line == 0 => return Ok((chunk, true)),
            (b'\n', true) => Chunk::Trailer { line: 0, cr: false },
            (_, false) if line < MAX_CHUNK_LINE_BYTES => Chunk::Trailer {
                line: line + 1,
                cr: false,
            },
            _ => return Err(Malformed::ChunkFraming),
        },
        Chunk::DataCr | Chunk::DataLf | Chunk::Data(_) => return Err(Malformed::ChunkFraming),
    };
    Ok((next, false))
}

fn hex_value(byte: u8) -> Option<u64> {
    char::from(byte).to_digit(16).map(u64::from)
}

/// The headers that decide where a body ends and whether the connection stays.
struct HeadFraming {
    content_length: Option<u64>,
    chunked: bool,
    keep_alive: bool,
}

impl HeadFraming {
    fn read(headers: &[httparse::Header<'_>], http11: bool) -> Result<Self, Malformed> {
        let mut framing = Self {
            content_length: None,
            chunked: false,
            keep_alive: http11,
        };
        for header in headers {
            let name = header.name;
            if name.eq_ignore_ascii_case("content-length") {
                let length = parse_content_length(header.value)?;
                if framing.content_length.is_some_and(|seen| seen != length) {
                    return Err(Malformed::ContentLength);
                }
                framing.content_length = Some(length);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                framing.chunked = last_token_is(header.value, b"chunked");
            } else if name.eq_ignore_ascii_case("connection") {
                if contains_token(header.value, b"close") {
                    framing.keep_alive = false;
                } else if contains_token(header.value, b"keep-alive") {
                    framing.keep_alive = true;
                }
            }
        }
        Ok(framing)
    }
}

fn parse_content_length(value: &[u8]) -> Result<u64, Malformed> {
    let text = std::str::from_utf8(value).map_err(|_| Malformed::ContentLength)?;
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Malformed::ContentLength);
    }
    text.parse().map_err(|_| Malformed::ContentLength)
}

fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|&b| b == b',').map(<[u8]>::trim_ascii)
}

fn contains_token(value: &[u8], token: &[u8]) -> bool {
    tokens(value).any(|t| t.eq_ignore_ascii_case(token))
}

fn last_token_is(value: &[u8], token: &[u8]) -> bool {
    tokens(value)
        .last()
        .is_some_and(|t| t.eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests;
