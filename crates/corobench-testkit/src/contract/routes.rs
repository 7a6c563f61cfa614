//! The contract's endpoints.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use corobench_target::PAYLOAD_FILE;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::conn::{Body, Reply};
use super::{Fault, Shared, lock};
use crate::http::RequestHead;

/// The largest upload body the contract accepts.
pub(super) const MAX_UPLOAD_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Healthz,
    Plaintext,
    Json,
    Io,
    Db,
    File,
    Upload,
    Mixed,
    Stats,
    Select1,
}

impl Endpoint {
    fn of(path: &str) -> Option<Self> {
        Some(match path {
            "/healthz" => Self::Healthz,
            "/plaintext" => Self::Plaintext,
            "/json" => Self::Json,
            "/io" => Self::Io,
            "/db" => Self::Db,
            "/file" => Self::File,
            "/upload" => Self::Upload,
            "/mixed" => Self::Mixed,
            "/stats" => Self::Stats,
            "/select1" => Self::Select1,
            _ => return None,
        })
    }

    fn method(self) -> &'static str {
        if self == Self::Upload { "POST" } else { "GET" }
    }
}

pub(super) fn route(head: &RequestHead, body: &mut Body<'_>, shared: &Shared) -> Reply {
    let served = Endpoint::of(head.path())
        .filter(|e| *e != Endpoint::Select1 || !shared.has(Fault::NoSelect1));
    let Some(endpoint) = served else {
        if shared.has(Fault::UnknownPathOk) {
            return Reply::text("Hello, World!");
        }
        return Reply::error(404, &format!("no such path: {}", head.path()));
    };
    // HEAD is GET without the body (RFC 9110), wherever GET is served.
    let method = if head.method == "HEAD" {
        "GET"
    } else {
        head.method.as_str()
    };
    if method != endpoint.method() && !shared.has(Fault::WrongMethodOk) {
        let message = format!(
            "{} takes {}, not {}",
            head.path(),
            endpoint.method(),
            head.method
        );
        return Reply::error(405, &message);
    }
    let reply = match endpoint {
        Endpoint::Healthz => Ok(Reply::text("ok")),
        Endpoint::Plaintext => Ok(Reply::text("Hello, World!")),
        Endpoint::Json => Ok(json_reply(shared)),
        Endpoint::Io => io_wait(head, shared),
        Endpoint::Db => Ok(db(shared)),
        Endpoint::File => file(head, shared),
        Endpoint::Upload => Ok(upload(body, shared)),
        Endpoint::Mixed => mixed(head, shared),
        Endpoint::Stats => Ok(stats(shared)),
        Endpoint::Select1 => Ok(select1(shared)),
    };
    reply.unwrap_or_else(|bad_parameter| bad_parameter)
}

/// An integer parameter: its default when absent, a `400` naming it when it
/// is not an integer in `range` (unless `BadParameterOk` asks for the default).
fn parameter(
    head: &RequestHead,
    name: &str,
    default: i64,
    range: RangeInclusive<i64>,
    shared: &Shared,
) -> Result<i64, Reply> {
    let Some(text) = head.query_param(name) else {
        return Ok(default);
    };
    match text.parse::<i64>() {
        Ok(value) if range.contains(&value) => Ok(value),
        _ if shared.has(Fault::BadParameterOk) => Ok(default),
        _ => {
            let message = format!(
                "{name} must be an integer in {}..={}, got {text:?}",
                range.start(),
                range.end()
            );
            Err(Reply::error(400, &message))
        }
    }
}

fn json_reply(shared: &Shared) -> Reply {
    if shared.has(Fault::WrongBody) {
        return Reply::json(&json!({ "msg": "hi" }));
    }
    Reply::json(&json!({ "message": "Hello, World!" }))
}

fn io_wait(head: &RequestHead, shared: &Shared) -> Result<Reply, Reply> {
    let ms = parameter(head, "ms", 10, 0..=10_000, shared)?;
    if !shared.has(Fault::IoNoWait) {
        shared.pause(Duration::from_millis(ms.unsigned_abs()));
    }
    Ok(Reply::json(
        &json!({ "message": "Hello, World!", "waited_ms": ms }),
    ))
}

fn db(shared: &Shared) -> Reply {
    let Some(world) = &shared.config.world else {
        return Reply::error(503, "database unavailable: DATABASE_URL is not set");
    };
    let skips_query = shared.has(Fault::DbSkipsQuery);
    if let Some((id, random_number)) = lock(&shared.remembered_row).filter(|_| skips_query) {
        return Reply::json(&json!({ "id": id, "randomNumber": random_number }));
    }
    let id = shared.random_world_id();
    match world.read_row(id) {
        Ok(Some(random_number)) => {
            if skips_query {
                *lock(&shared.remembered_row) = Some((id, random_number));
            }
            Reply::json(&json!({ "id": id, "randomNumber": random_number }))
        }
        Ok(None) => Reply::error(500, &format!("world has no row with id {id}")),
        Err(problem) => Reply::error(503, &format!("database unavailable: {problem}")),
    }
}

/// `SELECT 1` through a pool of one connection that never closes.
fn select1(shared: &Shared) -> Reply {
    if shared.config.world.is_none() {
        return Reply::error(503, "database unavailable: DATABASE_URL is not set");
    }
    if !shared.has(Fault::PoolNotCounted) {
        shared.pool_acquires.fetch_add(1, Ordering::Relaxed);
    }
    Reply::json(&json!({ "select": 1 }))
}

fn file(head: &RequestHead, shared: &Shared) -> Result<Reply, Reply> {
    let kb = parameter(head, "kb", 1, 1..=10_240, shared)?;
    let Some(dir) = &shared.config.data_dir else {
        return Ok(Reply::error(
            500,
            "DATA_DIR is not set: no payload.bin to serve",
        ));
    };
    let mut bytes = usize::try_from(kb).unwrap_or(1) * 1024;
    if shared.has(Fault::TruncatedFile) {
        bytes /= 2;
    }
    let path = dir.join(PAYLOAD_FILE);
    let mut content = vec![0u8; bytes];
    match File::open(&path).and_then(|mut f| f.read_exact(&mut content)) {
        Ok(()) => Ok(Reply::with(200, "application/octet-stream", content)),
        Err(e) => Ok(Reply::error(
            500,
            &format!("cannot read {}: {e}", path.display()),
        )),
    }
}

fn upload(body: &mut Body<'_>, shared: &Shared) -> Reply {
    let declared = body.declared_bytes();
    if declared > MAX_UPLOAD_BYTES {
        let mut reply = Reply::error(
            413,
            &format!("Content-Length {declared} is above the limit of {MAX_UPLOAD_BYTES} bytes"),
        );
        reply.close = true;
        return reply;
    }
    let dir = shared
        .config
        .upload_dir
        .clone()
        .unwrap_or_else(std::env::temp_dir);
    let number = shared.next_upload.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("testkit-upload-{}-{number}", std::process::id()));
    let stored = store_hashing(body, &path);
    let _ = fs::remove_file(&path);
    match stored {
        Ok((bytes, mut sha256)) => {
            if shared.has(Fault::WrongUploadHash) {
                let flipped = if sha256.starts_with('0') { "1" } else { "0" };
                sha256.replace_range(..1, flipped);
            }
            Reply::json(&json!({ "bytes": bytes, "sha256": sha256 }))
        }
        Err(e) => {
            let mut reply = Reply::error(500, &format!("upload to {} failed: {e}", path.display()));
            reply.close = true;
            reply
        }
    }
}

/// Streams `body` into a new file at `path`, hashing as it goes.
fn store_hashing(body: &mut Body<'_>, path: &PathBuf) -> io::Result<(u64, String)> {
    let mut file = File::create(path)?;
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let n = body.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        hasher.update(&chunk[..n]);
        file.write_all(&chunk[..n])?;
        total += n as u64;
    }
    file.flush()?;
    Ok((total, hex(&hasher.finalize())))
}

fn mixed(head: &RequestHead, shared: &Shared) -> Result<Reply, Reply> {
    let iters = parameter(head, "iters", 1000, 0..=1_000_000, shared)?;
    let ms = parameter(head, "ms", 10, 0..=10_000, shared)?;
    let rounds = iters.unsigned_abs() + u64::from(shared.has(Fault::WrongMixedDigest));
    let mut digest = [0u8; 32];
    for _ in 0..rounds {
        digest = Sha256::digest(digest).into();
    }
    shared.pause(Duration::from_millis(ms.unsigned_abs()));
    Ok(Reply::json(
        &json!({ "digest": hex(&digest), "iters": iters, "waited_ms": ms }),
    ))
}

fn stats(shared: &Shared) -> Reply {
    let model = if shared.has(Fault::WrongStatsModel) {
        "not-a-model"
    } else {
        &shared.config.model
    };
    let tasks = if shared.has(Fault::LeakTasks) {
        shared.next_connection.load(Ordering::Relaxed)
    } else {
        shared.lock_open().len() as u64
    };
    let mut body = json!({
        "model": model,
        "threads": os_threads(),
        "tasks": tasks,
        "heap_bytes": Value::Null,
    });
    if shared.config.world.is_some() {
        let acquires = shared.pool_acquires.load(Ordering::Relaxed);
        body["pool"] = json!({
            "max": 1, "open": u64::from(acquires > 0), "idle": u64::from(acquires > 0),
            "waiting": 0, "acquires": acquires, "new_connections": u64::from(acquires > 0),
            "empty_acquires": u64::from(acquires > 0), "acquire_wait_us": Value::Null,
        });
    }
    Reply::json(&body)
}

/// OS threads of this process, from `/proc/self/status` (1 if unreadable).
fn os_threads() -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Threads:"))
                .and_then(|count| count.trim().parse().ok())
        })
        .unwrap_or(1)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
