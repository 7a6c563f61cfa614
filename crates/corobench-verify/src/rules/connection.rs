//! Connection handling: keep-alive and pipelining.

use std::time::Duration;

use super::{Check, Target, Verdict, expect_body};
use crate::client::{Framing, Request};

/// How long the server may take to close after `Connection: close`.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

pub(super) fn keep_alive(target: Target) -> Check {
    let request = Request::get("/plaintext");
    let label = request.label();
    let (mut client, first) = target.open_with(&request)?;
    if first.framing == Framing::UntilClose {
        return Ok(Verdict::Warn(format!(
            "not checked: {label} carries no Content-Length, so its body ends only when the connection closes (see header-content-length)"
        )));
    }
    if first.says_close() {
        return Err(format!(
            "{label}: the server answered with Connection: close to a request that did not ask for it"
        ));
    }
    for attempt in 2..=3 {
        let response = client.exchange(&request).map_err(|e| {
            format!("{label} again on the same connection (request {attempt}): {e}; expected the connection to stay open")
        })?;
        expect_body(&label, &response, b"Hello, World!")?;
    }
    let closing = Request::get("/plaintext").closing();
    let response = client
        .exchange(&closing)
        .map_err(|e| format!("{label} with Connection: close: {e}"))?;
    expect_body(&label, &response, b"Hello, World!")?;
    if !client.closed_by_peer(CLOSE_WAIT) {
        return Ok(Verdict::Warn(format!(
            "{label} with Connection: close: the server kept the connection open for {CLOSE_WAIT:?} after answering"
        )));
    }
    Ok(Verdict::Pass)
}

/// Requests with distinct answers, so their order shows.
fn pipelined_requests() -> [Request; 4] {
    [
        Request::get("/plaintext"),
        Request::get("/json"),
        Request::get("/healthz"),
        Request::get("/mixed?iters=1&ms=0"),
    ]
}

/// Requests sent in one write must come back complete, in order, each as
/// it comes back when sent alone (whether that answer is right is the
/// business of the other rules).
pub(super) fn pipelining(target: Target, keep_alive: &Check) -> Check {
    if !matches!(keep_alive, Ok(Verdict::Pass)) {
        return Ok(Verdict::Warn(
            "not checked: pipelining needs connections kept alive (see keep-alive)".to_owned(),
        ));
    }
    let requests = pipelined_requests();
    let mut alone = Vec::new();
    for request in &requests {
        alone.push(target.exchange(request)?);
    }
    let labels: Vec<String> = requests.iter().map(Request::label).collect();
    let all = labels.join(", ");
    let mut client = target.connect(&all)?;
    let bytes: Vec<u8> = requests.iter().flat_map(Request::to_bytes).collect();
    client
        .send(&bytes)
        .map_err(|e| format!("sending {all} in one write: {e}"))?;
    for (index, (label, expected)) in labels.iter().zip(&alone).enumerate() {
        let response = client.read_response().map_err(|e| {
            format!(
                "{all} sent in one write: got {index} of {} responses, then for {label}: {e}",
                labels.len()
            )
        })?;
        if response.status != expected.status || response.body != expected.body {
            return Err(format!(
                "{all} sent in one write: response {} should answer {label} ({} {}), got {} {}",
                index + 1,
                expected.status,
                expected.body_excerpt(),
                response.status,
                response.body_excerpt()
            ));
        }
    }
    Ok(Verdict::Pass)
}
