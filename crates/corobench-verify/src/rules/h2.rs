//! The HTTP/2 rules: h2-settings (the server's SETTINGS come first and ours
//! are acknowledged), h2-hpack (repeated header sets on one connection, which
//! the client compresses through HPACK's dynamic table, are answered right)
//! and h2-concurrent-streams (a slow stream does not hold up a fast one).

use std::time::Instant;

use super::{Check, Target, Verdict, expect_body, expect_json};
use crate::client::{Request, Response};
use crate::frames::{self, ACK, GOAWAY, SETTINGS};
use crate::h2client::H2Client;

/// Frames read after our SETTINGS while waiting for their acknowledgement.
const MAX_FRAMES_BEFORE_ACK: usize = 16;
/// SETTINGS_MAX_CONCURRENT_STREAMS (0x3) and SETTINGS_INITIAL_WINDOW_SIZE (0x4).
const CLIENT_SETTINGS: [(u16, u32); 2] = [(0x3, 100), (0x4, 1 << 20)];

pub(super) fn settings(target: Target) -> Check {
    let label = "the HTTP/2 connection preface";
    let mut stream = target
        .link
        .connector
        .connect(target.addr, target.timeout)
        .map_err(|e| format!("{label}: {e}"))?;
    let io = |e: std::io::Error| format!("{label}: {e}");
    std::io::Write::write_all(&mut stream, frames::PREFACE).map_err(io)?;
    let ours = frames::settings_payload(&CLIENT_SETTINGS);
    frames::write_frame(&mut stream, SETTINGS, 0, 0, &ours).map_err(io)?;
    let first = frames::read_frame(&mut stream).map_err(|e| {
        format!("{label}: no frame came back ({e}); expected the server's SETTINGS")
    })?;
    if first.kind != SETTINGS || first.flags & ACK != 0 || first.stream != 0 {
        return Err(format!(
            "{label}: the server's first frame was {} (flags {:#04x}, stream {}); expected \
             SETTINGS (RFC 9113 §3.4)",
            first.kind_name(),
            first.flags,
            first.stream
        ));
    }
    if first.payload.len() % 6 != 0 {
        return Err(format!(
            "{label}: the server's SETTINGS payload is {} bytes, not a multiple of 6",
            first.payload.len()
        ));
    }
    frames::write_frame(&mut stream, SETTINGS, ACK, 0, &[]).map_err(io)?;
    for _ in 0..MAX_FRAMES_BEFORE_ACK {
        let frame = frames::read_frame(&mut stream).map_err(|e| {
            format!("{label}: waiting for the server to acknowledge our SETTINGS: {e}")
        })?;
        match (frame.kind, frame.flags & ACK) {
            (SETTINGS, ACK) if frame.payload.is_empty() => return Ok(Verdict::Pass),
            (GOAWAY, _) => return Err(format!("{label}: {}", goaway(&frame.payload))),
            _ => {}
        }
    }
    Err(format!(
        "{label}: {MAX_FRAMES_BEFORE_ACK} frames came back, none acknowledging our SETTINGS"
    ))
}

/// What a GOAWAY says: its error code and debug text.
fn goaway(payload: &[u8]) -> String {
    let code = payload
        .get(4..8)
        .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let debug = String::from_utf8_lossy(payload.get(8..).unwrap_or_default());
    format!("the server sent GOAWAY with error code {code:#x} ({debug:?})")
}

/// Requests whose header sets repeat, so that the client's HPACK encoder
/// answers the later ones from its dynamic table.
fn repeated_requests() -> Vec<(Request, &'static [u8])> {
    let with_headers = |path: &str| {
        let mut request = Request::get(path);
        request
            .headers
            .push(("user-agent", "corobench-verify".to_owned()));
        request
            .headers
            .push(("x-corobench-check", "hpack-dynamic-table-".repeat(8)));
        request
    };
    let mut requests = Vec::new();
    for _ in 0..4 {
        requests.push((with_headers("/plaintext"), b"Hello, World!".as_slice()));
        requests.push((with_headers("/healthz"), b"ok".as_slice()));
    }
    requests
}

pub(super) fn hpack(target: Target) -> Check {
    let mut client = target.h2("GET /plaintext and /healthz, four times each")?;
    for (index, (request, body)) in repeated_requests().iter().enumerate() {
        let label = format!(
            "{} (request {} on one connection)",
            request.label(),
            index + 1
        );
        let response = client
            .exchange(request)
            .map_err(|e| format!("{label}: {e}"))?;
        expect_body(&label, &response, body)?;
    }
    // A server that indexes its own headers sends the later responses from
    // its dynamic table too: one more on the same connection must decode.
    let label = "GET /json after eight requests on one connection";
    let response = client
        .exchange(&Request::get("/json"))
        .map_err(|e| format!("{label}: {e}"))?;
    expect_json(
        label,
        &response,
        &serde_json::json!({ "message": "Hello, World!" }),
    )?;
    Ok(Verdict::Pass)
}

pub(super) fn concurrent_streams(target: Target) -> Check {
    let all = "GET /io?ms=200 then GET /plaintext as two streams of one connection";
    let mut client = target.h2(all)?;
    let requests = [Request::get("/io?ms=200"), Request::get("/plaintext")];
    let mut done = client.exchange_concurrently(&requests).into_iter();
    let (slow, fast) = (done.next(), done.next());
    let answered = |result: Option<Result<(Response, Instant), _>>, label: &str| {
        result
            .unwrap_or_else(|| Err(crate::client::ClientError::Closed("unanswered".to_owned())))
            .map_err(|e| format!("{all}: {label}: {e}"))
    };
    let (slow, slow_at) = answered(slow, "GET /io?ms=200")?;
    let (fast, fast_at) = answered(fast, "GET /plaintext")?;
    expect_body("GET /plaintext", &fast, b"Hello, World!")?;
    super::expect_status("GET /io?ms=200", &slow, 200)?;
    if fast_at >= slow_at {
        return Err(format!(
            "{all}: /plaintext was answered {:?} after it was sent, after the slow stream \
             ({:?}): the server holds streams of one connection up behind each other",
            fast.elapsed, slow.elapsed
        ));
    }
    Ok(Verdict::Pass)
}

impl Target<'_> {
    /// A new HTTP/2 connection, for the rules that need one of their own.
    pub(super) fn h2(self, label: &str) -> Result<H2Client, String> {
        H2Client::connect(&self.link.connector, self.addr, self.timeout)
            .map_err(|e| format!("{label}: {e}"))
    }
}
