//! The endpoints with parameters and work behind them: io, file, mixed, stats.

use std::time::Duration;

use corobench_target::payload_byte;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Check, Target, Verdict, expect_json, expect_status, json_body};

pub(super) fn io(target: Target) -> Check {
    let label = "GET /io?ms=200";
    let response = target.get("/io?ms=200")?;
    expect_json(
        label,
        &response,
        &json!({ "message": "Hello, World!", "waited_ms": 200 }),
    )?;
    if response.elapsed < Duration::from_millis(200) {
        return Err(format!(
            "{label}: expected a wait of at least 200 ms, answered after {:?}",
            response.elapsed
        ));
    }
    if response.elapsed >= Duration::from_secs(1) {
        return Err(format!(
            "{label}: expected an answer within 1 s, took {:?}",
            response.elapsed
        ));
    }
    let expected = json!({ "message": "Hello, World!", "waited_ms": 10 });
    expect_json("GET /io", &target.get("/io")?, &expected)?;
    let expected = json!({ "message": "Hello, World!", "waited_ms": 0 });
    expect_json("GET /io?ms=0", &target.get("/io?ms=0")?, &expected)?;
    Ok(Verdict::Pass)
}

pub(super) fn file(target: Target) -> Check {
    for (path, kb) in [("/file?kb=1", 1), ("/file?kb=1024", 1024), ("/file", 1)] {
        let label = format!("GET {path}");
        let response = target.get(path)?;
        expect_status(&label, &response, 200)?;
        let expected_len = kb * 1024;
        if response.body.len() != expected_len {
            return Err(format!(
                "{label}: expected the first {expected_len} bytes of payload.bin, got {} bytes",
                response.body.len()
            ));
        }
        let mismatch = response
            .body
            .iter()
            .zip(0u64..)
            .find(|&(byte, offset)| *byte != payload_byte(offset));
        if let Some((byte, offset)) = mismatch {
            return Err(format!(
                "{label}: byte {offset} is {byte:#04x}, payload.bin holds {:#04x} there",
                payload_byte(offset)
            ));
        }
    }
    Ok(Verdict::Pass)
}

/// `h_N` of the contract's SHA-256 chain, in lower-case hex.
fn chain_digest(iters: u32) -> String {
    let mut digest = [0u8; 32];
    for _ in 0..iters {
        digest = Sha256::digest(digest).into();
    }
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn mixed(target: Target) -> Check {
    for (query, iters, ms) in [
        ("iters=0&ms=0", 0, 0),
        ("iters=1&ms=0", 1, 0),
        ("iters=1000&ms=50", 1000, 50),
    ] {
        let label = format!("GET /mixed?{query}");
        let response = target.get(&format!("/mixed?{query}"))?;
        let expected = json!({ "digest": chain_digest(iters), "iters": iters, "waited_ms": ms });
        expect_json(&label, &response, &expected)?;
        if response.elapsed < Duration::from_millis(ms) {
            return Err(format!(
                "{label}: expected a wait of at least {ms} ms, answered after {:?}",
                response.elapsed
            ));
        }
    }
    let expected = json!({ "digest": chain_digest(1000), "iters": 1000, "waited_ms": 10 });
    expect_json("GET /mixed", &target.get("/mixed")?, &expected)?;
    Ok(Verdict::Pass)
}

pub(super) fn stats(target: Target, model: &str) -> Check {
    let label = "GET /stats";
    let response = target.get("/stats")?;
    expect_status(label, &response, 200)?;
    let body = json_body(label, &response)?;
    let field = |name: &str| body.get(name).cloned().unwrap_or(Value::Null);
    if field("model") != json!(model) {
        return Err(format!(
            "{label}: expected model {model:?}, got {} in {}",
            field("model"),
            response.body_excerpt()
        ));
    }
    if field("threads").as_u64().unwrap_or(0) == 0 {
        return Err(format!(
            "{label}: expected threads to be a positive integer, got {} in {}",
            field("threads"),
            response.body_excerpt()
        ));
    }
    for name in ["tasks", "heap_bytes"] {
        let value = field(name);
        let missing = body.get(name).is_none();
        if missing || !(value.is_null() || value.is_u64()) {
            let got = if missing {
                "no such field".to_owned()
            } else {
                value.to_string()
            };
            return Err(format!(
                "{label}: expected {name} to be a non-negative integer or null, got {got} in {}",
                response.body_excerpt()
            ));
        }
    }
    Ok(Verdict::Pass)
}

#[cfg(test)]
mod tests {
    use super::chain_digest;

    #[test]
    fn the_chain_matches_the_contracts_reference_digests() {
        assert_eq!(chain_digest(0), "0".repeat(64));
        assert_eq!(
            chain_digest(1),
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
        );
        assert_eq!(
            chain_digest(1000),
            "36c1cb4f826ae42ceba848227e0c5f786178ca9dceca6772e5d728d09c30a2f6"
        );
    }
}
