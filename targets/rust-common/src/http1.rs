//! Sans-I/O HTTP/1.1 framing for the raw-socket targets: parse one request
//! head from the front of a buffer, write one response head.
//!
//! The caller owns the socket and the buffer; this module never reads or
//! writes, so the framing rules are tested here without any runtime.

use std::io::Write as _;

use crate::reply::reason_phrase;
use crate::route::{Route, route};
use crate::upload::check_declared_len;
use crate::{ContractError, Reply};

/// A request head larger than this is answered 431 and the connection closed.
pub const MAX_HEAD_BYTES: usize = 8 * 1024;
/// More header lines than this are answered 431 as well.
pub const MAX_HEADERS: usize = 32;

/// One parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    /// The endpoint, or the contract error to answer with.
    pub route: Result<Route, ContractError>,
    /// `HEAD` requests get the head of the `GET` answer and no body.
    pub head_only: bool,
    /// Bytes of body that follow the head (`Content-Length`, 0 when absent).
    pub body_len: u64,
    /// Whether the connection stays open after the answer.
    pub keep_alive: bool,
    /// The client sent `Expect: 100-continue` and waits before the body.
    pub expects_continue: bool,
    /// Bytes of the buffer the head took, the blank line included.
    pub head_len: usize,
}

/// What the front of the buffer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Complete(RequestHead),
    /// The head is not complete yet: read more.
    Partial,
}

/// A request that cannot be framed: answer with its error, then close,
/// because where the next request starts is unknown.
pub type FramingError = ContractError;

/// Parses the request head at the front of `buf`.
pub fn parse_head(buf: &[u8]) -> Result<Parsed, FramingError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let head_len = match request.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD_BYTES => {
            return Err(ContractError::HeadTooLarge {
                limit_bytes: MAX_HEAD_BYTES,
            });
        }
        Ok(httparse::Status::Partial) => return Ok(Parsed::Partial),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(ContractError::HeadTooLarge {
                limit_bytes: MAX_HEAD_BYTES,
            });
        }
        Err(error) => {
            return Err(ContractError::Malformed {
                message: error.to_string(),
            });
        }
    };
    if head_len > MAX_HEAD_BYTES {
        return Err(ContractError::HeadTooLarge {
            limit_bytes: MAX_HEAD_BYTES,
        });
    }
    let fields = HeaderFields::read(request.headers)?;
    let method = request.method.unwrap_or_default();
    let version_1_1 = request.version == Some(1);
    check_declared_len(fields.content_length)?;
    Ok(Parsed::Complete(RequestHead {
        route: route(method, request.path.unwrap_or_default()),
        head_only: method == "HEAD",
        body_len: fields.content_length,
        keep_alive: if version_1_1 {
            !fields.close
        } else {
            fields.keep_alive
        },
        expects_continue: version_1_1 && fields.expects_continue,
        head_len,
    }))
}

#[derive(Default)]
struct HeaderFields {
    content_length: u64,
    close: bool,
    keep_alive: bool,
    expects_continue: bool,
}

impl HeaderFields {
    fn read(headers: &[httparse::Header<'_>]) -> Result<Self, FramingError> {
        let mut fields = Self::default();
        let mut length_seen: Option<u64> = None;
        for header in headers {
            let value = std::str::from_utf8(header.value).unwrap_or("").trim();
            if header.name.eq_ignore_ascii_case("content-length") {
                let length = parse_content_length(value)?;
                if length_seen.is_some_and(|seen| seen != length) {
                    return Err(malformed("conflicting Content-Length headers"));
                }
                length_seen = Some(length);
            } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
                return Err(ContractError::LengthRequired);
            } else if header.name.eq_ignore_ascii_case("connection") {
                fields.close |= has_token(value, "close");
                fields.keep_alive |= has_token(value, "keep-alive");
            } else if header.name.eq_ignore_ascii_case("expect") {
                fields.expects_continue = value.eq_ignore_ascii_case("100-continue");
            }
        }
        fields.content_length = length_seen.unwrap_or(0);
        Ok(fields)
    }
}

fn parse_content_length(value: &str) -> Result<u64, FramingError> {
    let digits_only = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
    digits_only
        .then(|| value.parse::<u64>().ok())
        .flatten()
        .ok_or_else(|| malformed("Content-Length must be a non-negative integer"))
}

fn has_token(value: &str, token: &str) -> bool {
    value
        .split(',')
        .any(|part| part.trim().eq_ignore_ascii_case(token))
}

fn malformed(message: &str) -> ContractError {
    ContractError::Malformed {
        message: message.to_owned(),
    }
}

/// The interim answer to `Expect: 100-continue`.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Appends a response head: status line, `Server`, `Date`, `Content-Type`,
/// `Content-Length`, and `Connection: close` when the connection ends.
pub fn write_head(out: &mut Vec<u8>, reply: &Reply, server: &str, keep_alive: bool) {
    // Writing into a Vec cannot fail.
    let _ = write!(
        out,
        "HTTP/1.1 {} {}\r\nServer: {server}\r\nDate: ",
        reply.status,
        reason_phrase(reply.status)
    );
    out.extend_from_slice(&crate::date::http_date());
    let _ = write!(
        out,
        "\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
        reply.content_type,
        reply.body.len()
    );
    if !keep_alive {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// Appends head and body (the body is omitted for `HEAD`).
pub fn write_reply(
    out: &mut Vec<u8>,
    reply: &Reply,
    server: &str,
    keep_alive: bool,
    head_only: bool,
) {
    write_head(out, reply, server, keep_alive);
    if !head_only {
        out.extend_from_slice(&reply.body);
    }
}

#[cfg(test)]
#[path = "http1_tests.rs"]
mod tests;
