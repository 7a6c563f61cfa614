//! The select1 rule: `GET /select1` runs `SELECT 1` through the target's
//! pool and answers `{"select":1}`; without a database, `503` with a JSON
//! error. The endpoint is optional: a target that answers `404` is warned
//! about, not failed, and suites cannot measure it with a `/select1`
//! workload. Where `/stats` carries the pool's own counters, each must be
//! a non-negative integer or null, and `acquires` must count every query.

use serde_json::{Value, json};

use super::{Check, Target, Verdict, expect_error, expect_json, expect_status, json_body};

/// `/select1` requests whose checkouts the pool must count.
const REQUESTS: u64 = 20;

/// The fields of `/stats`'s optional `pool` object.
const POOL_FIELDS: [&str; 8] = [
    "max",
    "open",
    "idle",
    "waiting",
    "acquires",
    "new_connections",
    "empty_acquires",
    "acquire_wait_us",
];

pub(super) fn select1(target: Target, database: bool) -> Check {
    let first = target.get("/select1")?;
    if first.status == 404 {
        return Ok(Verdict::Warn(
            "GET /select1 answered 404: this optional endpoint is not served, so a /select1 \
             workload cannot measure this target"
                .to_owned(),
        ));
    }
    if !database {
        expect_error("GET /select1 (no database runs)", &first, 503, None)?;
        pool_acquires(target)?;
        return Ok(Verdict::Pass);
    }
    let label = "GET /select1";
    let answer = json!({ "select": 1 });
    expect_json(label, &first, &answer)?;
    let before = pool_acquires(target)?;
    for _ in 0..REQUESTS {
        expect_json(label, &target.get("/select1")?, &answer)?;
    }
    let after = pool_acquires(target)?;
    match (before, after) {
        (Some(before), Some(after)) if after < before + REQUESTS => Err(format!(
            "GET /select1 × {REQUESTS}: /stats pool.acquires went from {before} to {after}; the \
             pool must count every checkout"
        )),
        _ => Ok(Verdict::Pass),
    }
}

/// `pool.acquires` of `/stats`, `None` when the target reports no pool or
/// the pool cannot count; an error when the pool object is malformed.
fn pool_acquires(target: Target) -> Result<Option<u64>, String> {
    let label = "GET /stats";
    let response = target.get("/stats")?;
    expect_status(label, &response, 200)?;
    let body = json_body(label, &response)?;
    let Some(pool) = body.get("pool") else {
        return Ok(None);
    };
    let Some(object) = pool.as_object() else {
        return Err(format!(
            "{label}: expected pool to be an object of the pool's counters, got {pool}"
        ));
    };
    for (name, value) in object {
        if POOL_FIELDS.contains(&name.as_str()) && !(value.is_null() || value.is_u64()) {
            return Err(format!(
                "{label}: expected pool.{name} to be a non-negative integer or null, got {value}"
            ));
        }
    }
    Ok(object.get("acquires").and_then(Value::as_u64))
}
