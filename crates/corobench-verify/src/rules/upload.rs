//! The upload rule: bodies of 0 bytes, 1 MiB and 64 MiB come back with
//! their length and SHA-256; 64 MiB + 1 is refused with `413` unread.

use std::time::Duration;

use serde_json::json;
use sha2::{Digest, Sha256};

use super::{Check, Target, Verdict, expect_error, expect_json};
use crate::client::Request;

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
    let mut client = target.connect(&label)?;
    client.set_timeout(LARGE_UPLOAD_TIMEOUT);
    client
        .send(&request.head_bytes(bytes))
        .map_err(|e| format!("{label}: sending the head: {e}"))?;
    let mut hasher = Sha256::new();
    let mut generator = BodyPattern::default();
    let mut chunk = vec![0u8; 256 * 1024];
    let mut sent = 0u64;
    while sent < bytes {
        let n = usize::try_from((bytes - sent).min(chunk.len() as u64)).unwrap_or(chunk.len());
        generator.fill(&mut chunk[..n]);
        hasher.update(&chunk[..n]);
        client.send(&chunk[..n]).map_err(|e| {
            format!("{label}: the server stopped taking the body after {sent} bytes: {e}")
        })?;
        sent += n as u64;
    }
    let sha256: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let response = client
        .read_response()
        .map_err(|e| format!("{label}: {e}"))?;
    expect_json(
        &label,
        &response,
        &json!({ "bytes": bytes, "sha256": sha256 }),
    )
}

/// A `Content-Length` one byte over the limit: `413` before any body byte.
fn too_large(target: Target) -> Result<(), String> {
    let bytes = MAX_UPLOAD_BYTES + 1;
    let label = format!("POST /upload with Content-Length {bytes} (body not sent)");
    let mut client = target.connect(&label)?;
    let head = Request::post("/upload", Vec::new()).head_bytes(bytes);
    client.send(&head).map_err(|e| format!("{label}: {e}"))?;
    let response = client
        .read_response()
        .map_err(|e| format!("{label}: {e}; expected 413 without the body being read"))?;
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
