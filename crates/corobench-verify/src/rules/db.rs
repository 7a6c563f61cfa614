//! The db rule: rows match the table, and the table is really read once per
//! request; without a database, `503` with a JSON error.

use std::time::{Duration, Instant};

use corobench_target::WORLD_ROWS;
use serde_json::Value;

use super::{Check, Target, Verdict, expect_error, expect_status, json_body};
use crate::DatabaseProbe;

/// `/db` requests whose reads are counted.
const REQUESTS: u64 = 20;
/// How long the read counter may lag. A PostgreSQL 15 backend flushes its
/// table statistics when it goes idle, but at most once a second; one that
/// flushed less than a second ago arms a timer of `PGSTAT_IDLE_INTERVAL`
/// (10 s) instead. `pg_stat_force_next_flush()` only reaches the session that
/// calls it, not the target's pooled connections, so the verifier polls.
const STATS_LAG: Duration = Duration::from_secs(12);
const POLL_EVERY: Duration = Duration::from_millis(200);

pub(super) fn db(target: Target, database: Option<&dyn DatabaseProbe>) -> Check {
    let Some(database) = database else {
        let label = "GET /db (no database runs)";
        expect_error(label, &target.get("/db")?, 503, None)?;
        return Ok(Verdict::Pass);
    };
    let before = database
        .world_reads()
        .map_err(|e| format!("cannot read the database's counters to check /db: {e}"))?;
    let mut rows = Vec::new();
    for _ in 0..REQUESTS {
        rows.push(row(target)?);
    }
    // Counted before the rows are checked: the probe's own lookups read
    // `world` too.
    let after = reads_reaching(database, before + REQUESTS)?;
    if after < before + REQUESTS {
        return Err(format!(
            "GET /db × {REQUESTS}: expected world to be read at least {REQUESTS} times, it was read {} times (pg_stat_user_tables seq_scan + idx_scan)",
            after.saturating_sub(before)
        ));
    }
    for (id, random_number) in rows {
        let stored = database
            .random_number(id)
            .map_err(|e| format!("cannot read world row {id} to check /db: {e}"))?;
        if stored != Some(random_number) {
            let stored = stored.map_or_else(|| "no such row".to_owned(), |n| n.to_string());
            return Err(format!(
                "GET /db: answered {{\"id\":{id},\"randomNumber\":{random_number}}}, but world holds randomNumber {stored} for id {id}"
            ));
        }
    }
    Ok(Verdict::Pass)
}

/// One `/db` answer as `(id, randomNumber)`.
fn row(target: Target) -> Result<(i32, i32), String> {
    let label = "GET /db";
    let response = target.get("/db")?;
    expect_status(label, &response, 200)?;
    let body = json_body(label, &response)?;
    let field = |name: &str| {
        body.get(name)
            .and_then(Value::as_i64)
            .and_then(|n| i32::try_from(n).ok())
    };
    match (field("id"), field("randomNumber")) {
        (Some(id), Some(random_number)) if is_world_id(id) => Ok((id, random_number)),
        _ => Err(format!(
            "{label}: expected {{\"id\":1..={WORLD_ROWS},\"randomNumber\":R}}, got {}",
            response.body_excerpt()
        )),
    }
}

/// Whether `id` names a row of the `world` table.
fn is_world_id(id: i32) -> bool {
    u32::try_from(id).is_ok_and(|id| (1..=WORLD_ROWS).contains(&id))
}

/// Polls the read counter until it reaches `goal` or the statistics lag is
/// over; returns the last reading.
fn reads_reaching(database: &dyn DatabaseProbe, goal: u64) -> Result<u64, String> {
    let deadline = Instant::now() + STATS_LAG;
    loop {
        let reads = database
            .world_reads()
            .map_err(|e| format!("cannot read the database's counters to check /db: {e}"))?;
        if reads >= goal || Instant::now() >= deadline {
            return Ok(reads);
        }
        std::thread::sleep(POLL_EVERY);
    }
}
