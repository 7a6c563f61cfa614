//! The fixed answers and the error rules: healthz, plaintext, json,
//! not-found, bad-parameter, method-not-allowed.

use serde_json::json;

use super::{Check, Target, Verdict, expect_body, expect_error, expect_json};
use crate::client::Request;

pub(super) fn healthz(target: Target) -> Check {
    expect_body("GET /healthz", &target.get("/healthz")?, b"ok")?;
    Ok(Verdict::Pass)
}

pub(super) fn plaintext(target: Target) -> Check {
    expect_body(
        "GET /plaintext",
        &target.get("/plaintext")?,
        b"Hello, World!",
    )?;
    Ok(Verdict::Pass)
}

pub(super) fn json(target: Target) -> Check {
    let expected = json!({ "message": "Hello, World!" });
    expect_json("GET /json", &target.get("/json")?, &expected)?;
    Ok(Verdict::Pass)
}

pub(super) fn not_found(target: Target) -> Check {
    for path in ["/no-such-path", "/plaintext/extra", "/"] {
        let label = format!("GET {path}");
        expect_error(&label, &target.get(path)?, 404, None)?;
    }
    Ok(Verdict::Pass)
}

/// Requests whose parameter is not an integer in range, and the parameter
/// each names.
const BAD_PARAMETERS: [(&str, &str); 10] = [
    ("/io?ms=-1", "ms"),
    ("/io?ms=abc", "ms"),
    ("/io?ms=10001", "ms"),
    ("/file?kb=0", "kb"),
    ("/file?kb=10241", "kb"),
    ("/file?kb=1.5", "kb"),
    ("/mixed?iters=-1&ms=0", "iters"),
    ("/mixed?iters=1000001&ms=0", "iters"),
    ("/mixed?iters=1&ms=abc", "ms"),
    ("/mixed?iters=1&ms=10001", "ms"),
];

pub(super) fn bad_parameter(target: Target) -> Check {
    for (path, parameter) in BAD_PARAMETERS {
        let label = format!("GET {path}");
        expect_error(&label, &target.get(path)?, 400, Some(parameter))?;
    }
    // Unknown parameters are ignored.
    let label = "GET /plaintext?unknown=1";
    expect_body(
        label,
        &target.get("/plaintext?unknown=1")?,
        b"Hello, World!",
    )?;
    Ok(Verdict::Pass)
}

pub(super) fn method_not_allowed(target: Target) -> Check {
    let requests = [
        Request::post("/plaintext", Vec::new()),
        Request::post("/json", b"{}".to_vec()),
        Request::get("/upload"),
    ];
    for request in &requests {
        expect_error(&request.label(), &target.exchange(request)?, 405, None)?;
    }
    Ok(Verdict::Pass)
}
