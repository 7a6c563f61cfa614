//! Response bodies: status, content type and bytes, before any framing.

use std::borrow::Cow;

use serde::Serialize;

use crate::ContractError;

pub const TEXT_PLAIN: &str = "text/plain; charset=utf-8";
pub const APPLICATION_JSON: &str = "application/json";
pub const OCTET_STREAM: &str = "application/octet-stream";

/// A response of the contract, ready to be framed by a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Cow<'static, [u8]>,
}

#[derive(Serialize)]
struct Message<'a> {
    message: &'a str,
}

#[derive(Serialize)]
struct Waited<'a> {
    message: &'a str,
    waited_ms: u32,
}

#[derive(Serialize)]
struct Mixed<'a> {
    digest: &'a str,
    iters: u32,
    waited_ms: u32,
}

#[derive(Serialize)]
struct Uploaded<'a> {
    bytes: u64,
    sha256: &'a str,
}

#[derive(Serialize)]
struct World {
    id: i32,
    #[serde(rename = "randomNumber")]
    random_number: i32,
}

/// What `/stats` reports; `None` serialises as `null`.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub model: &'static str,
    pub threads: Option<u64>,
    pub tasks: Option<u64>,
    pub heap_bytes: Option<u64>,
}

const HELLO: &str = "Hello, World!";

impl Reply {
    fn ok_json<T: Serialize>(value: &T) -> Self {
        let body = serde_json::to_vec(value).expect("plain structs always serialise");
        Self {
            status: 200,
            content_type: APPLICATION_JSON,
            body: Cow::Owned(body),
        }
    }

    pub fn healthz() -> Self {
        Self {
            status: 200,
            content_type: TEXT_PLAIN,
            body: Cow::Borrowed(b"ok"),
        }
    }

    pub fn plaintext() -> Self {
        Self {
            status: 200,
            content_type: TEXT_PLAIN,
            body: Cow::Borrowed(HELLO.as_bytes()),
        }
    }

    /// `/json`: serialised per request, as the contract asks.
    pub fn json() -> Self {
        Self::ok_json(&Message { message: HELLO })
    }

    pub fn io(waited_ms: u32) -> Self {
        Self::ok_json(&Waited {
            message: HELLO,
            waited_ms,
        })
    }

    pub fn mixed(digest_hex: &str, iters: u32, waited_ms: u32) -> Self {
        Self::ok_json(&Mixed {
            digest: digest_hex,
            iters,
            waited_ms,
        })
    }

    pub fn uploaded(bytes: u64, sha256_hex: &str) -> Self {
        Self::ok_json(&Uploaded {
            bytes,
            sha256: sha256_hex,
        })
    }

    pub fn world(id: i32, random_number: i32) -> Self {
        Self::ok_json(&World { id, random_number })
    }

    pub fn stats(stats: &Stats) -> Self {
        Self::ok_json(stats)
    }

    pub fn file(bytes: Vec<u8>) -> Self {
        Self {
            status: 200,
            content_type: OCTET_STREAM,
            body: Cow::Owned(bytes),
        }
    }

    pub fn error(error: &ContractError) -> Self {
        Self {
            status: error.status(),
            content_type: APPLICATION_JSON,
            body: Cow::Owned(error.body()),
        }
    }
}

/// The reason phrase of every status this crate produces.
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_text(reply: &Reply) -> &str {
        std::str::from_utf8(&reply.body).expect("utf-8 body")
    }

    #[test]
    fn fixed_bodies_match_the_contract() {
        assert_eq!(body_text(&Reply::plaintext()), "Hello, World!");
        assert_eq!(Reply::plaintext().body.len(), 13);
        assert_eq!(body_text(&Reply::healthz()), "ok");
        assert_eq!(body_text(&Reply::json()), r#"{"message":"Hello, World!"}"#);
        assert_eq!(Reply::json().content_type, APPLICATION_JSON);
    }

    #[test]
    fn computed_bodies_match_the_contract() {
        assert_eq!(
            body_text(&Reply::io(7)),
            r#"{"message":"Hello, World!","waited_ms":7}"#
        );
        assert_eq!(
            body_text(&Reply::mixed("ab", 3, 4)),
            r#"{"digest":"ab","iters":3,"waited_ms":4}"#
        );
        assert_eq!(
            body_text(&Reply::uploaded(5, "cd")),
            r#"{"bytes":5,"sha256":"cd"}"#
        );
        assert_eq!(
            body_text(&Reply::world(12, 34)),
            r#"{"id":12,"randomNumber":34}"#
        );
    }

    #[test]
    fn stats_spells_unknowns_as_null() {
        let stats = Stats {
            model: "work-stealing-async",
            threads: Some(3),
            tasks: Some(1),
            heap_bytes: None,
        };
        assert_eq!(
            body_text(&Reply::stats(&stats)),
            r#"{"model":"work-stealing-async","threads":3,"tasks":1,"heap_bytes":null}"#
        );
    }

    #[test]
    fn errors_are_json_with_their_status() {
        let reply = Reply::error(&ContractError::LengthRequired);
        assert_eq!(reply.status, 411);
        assert_eq!(reply.content_type, APPLICATION_JSON);
        assert!(body_text(&reply).starts_with(r#"{"error":"#));
        assert_eq!(reason_phrase(431), "Request Header Fields Too Large");
    }
}
