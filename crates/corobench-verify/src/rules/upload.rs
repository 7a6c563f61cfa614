//! The upload rule: bodies of 0 bytes, 1 MiB and 64 MiB come back with
//! their length and SHA-256; 64 MiB + 1 is refused with `413` unread.

use std::time::Duration;

use serde_json::json;
use sha2::{Digest, Sha256};

use super::{Check, Target, Verdict, expect_error, expect_json};
use crate::client::{ClientError, Request};

/// The largest body the contract accepts.
const MAX_UPLOAD_BYTES: u64 = 64 * 1024 * 1024;
/// A 64 MiB body is hashed and written to disk before the answer.
const LARGE_UPLOAD_TIMEOUT: Duration = Duration::from_secs(60);

pub(super) fn upload(target: Target) -> Check {
    for bytes in [0, 1024 * 1024, MAX_UPLOAD_BYTES] {
        upload_of(target, bytes)?;
    }
    too_large(target)?;
    Ok(Verdict::Pass)
}

/// Sends a body of `bytes` bytes (a pattern no server can guess cheaply),
/// streaming it, and checks the answer.
fn upload_of(target: Target, bytes: u64) -> Result<(), String> {
    let request = Request::post("/upload", Vec::new());
    let label = format!("POST /upload with {bytes} bytes");
    let mut body = PatternBody::new(bytes);
    let response = if target.link.protocol.is_h2() {
        let mut client = target.h2(&label)?;
        client.set_timeout(LARGE_UPLOAD_TIMEOUT);
        client
            .exchange_streamed(&request, bytes, || body.next_chunk())
            .map_err(|e| format!("{label}: {e}"))?
    } else {
        let mut client = target.connect(&label)?;
        client.set_timeout(LARGE_UPLOAD_TIMEOUT);
        client
            .send(&request.head_bytes(bytes))
            .map_err(|e| format!("{label}: sending the head: {e}"))?;
        while let Some(chunk) = body.next_chunk() {
            client.send(&chunk).map_err(|e| {
                let sent = body.sent - chunk.len() as u64;
                format!("{label}: the server stopped taking the body after {sent} bytes: {e}")
            })?;
        }
        client
            .read_response()
            .map_err(|e| format!("{label}: {e}"))?
    };
    let expected = json!({ "bytes": bytes, "sha256": body.sha256() });
    expect_json(&label, &response, &expected)
}

/// A body of a fixed length, made chunk by chunk and hashed as it goes.
struct PatternBody {
    length: u64,
    sent: u64,
    pattern: BodyPattern,
    hasher: Sha256,
}

impl PatternBody {
    /// Bytes per chunk sent.
    const CHUNK: u64 = 256 * 1024;

    fn new(length: u64) -> Self {
        Self {
            length,
            sent: 0,
            pattern: BodyPattern::default(),
            hasher: Sha256::new(),
        }
    }

    fn next_chunk(&mut self) -> Option<Vec<u8>> {
        let n = (self.length - self.sent).min(Self::CHUNK);
        if n == 0 {
            return None;
        }
        let mut chunk = vec![0u8; usize::try_from(n).unwrap_or(0)];
        self.pattern.fill(&mut chunk);
        self.hasher.update(&chunk);
        self.sent += n;
        Some(chunk)
    }

    /// The SHA-256 of every byte made so far, in lower-case hex.
    fn sha256(&self) -> String {
        self.hasher
            .clone()
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// A `Content-Length` one byte over the limit: `413` before any body byte.
fn too_large(target: Target) -> Result<(), String> {
    let bytes = MAX_UPLOAD_BYTES + 1;
    let label = format!("POST /upload with Content-Length {bytes} (body not sent)");
    let request = Request::post("/upload", Vec::new());
    let unread = |e: ClientError| format!("{label}: {e}; expected 413 without the body being read");
    let response = if target.link.protocol.is_h2() {
        target
            .h2(&label)?
            .exchange_head_only(&request, bytes)
            .map_err(unread)?
    } else {
        let mut client = target.connect(&label)?;
        client
            .send(&request.head_bytes(bytes))
            .map_err(|e| format!("{label}: {e}"))?;
        client.read_response().map_err(unread)?
    };
    expect_error(&label, &response, 413, None)
}

/// Pseudo-random bytes (xorshift64), the same on every run.
#[derive(Debug)]
struct BodyPattern {
    state: u64,
}

impl Default for BodyPattern {
    fn default() -> Self {
        Self {
            state: 0x9E37_79B9_7F4A_7C15,
        }
    }
}

impl BodyPattern {
    fn fill(&mut self, out: &mut [u8]) {
        for block in out.chunks_mut(8) {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            block.copy_from_slice(&self.state.to_le_bytes()[..block.len()]);
        }
    }
}
