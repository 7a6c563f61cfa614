//! The endpoints in compio's idiom: timers and file reads go through the
//! thread's io_uring; CPU work runs on the thread itself.

use std::time::Duration;

use compio::BufResult;
use compio::fs::File;
use compio::io::AsyncReadAtExt as _;
use rust_common::reply::Stats;
use rust_common::{ContractError, Reply, Route, digest, payload, proc_status};

use crate::server::ThreadContext;

/// The model id `/stats` reports; equal to `model` in `target.toml`.
const MODEL: &str = "thread-per-core-io-uring";

pub(crate) async fn answer(route: Route, context: &ThreadContext) -> Result<Reply, ContractError> {
    Ok(match route {
        Route::Healthz => Reply::healthz(),
        Route::Plaintext => Reply::plaintext(),
        Route::Json => Reply::json(),
        Route::Io { wait_ms } => {
            compio::time::sleep(Duration::from_millis(wait_ms.into())).await;
            Reply::io(wait_ms)
        }
        Route::Mixed { iters, wait_ms } => {
            // Hashing blocks this thread's ring: every connection of the
            // thread waits. That is the model's truth.
            let digest = digest::hex_lower(&digest::sha256_chain(iters));
            compio::time::sleep(Duration::from_millis(wait_ms.into())).await;
            Reply::mixed(&digest, iters, wait_ms)
        }
        Route::File { kb } => read_file(context, kb).await?,
        Route::Db => context.db.random_world().await?,
        Route::Stats => Reply::stats(&Stats {
            model: MODEL,
            threads: proc_status::thread_count(),
            tasks: Some(crate::tasks::alive()),
            heap_bytes: None,
        }),
        // Uploads need the connection; the connection answers them itself.
        Route::Upload => unreachable_upload(),
    })
}

async fn read_file(context: &ThreadContext, kb: u32) -> Result<Reply, ContractError> {
    let path = payload::payload_path(&context.config.data_dir);
    let len_bytes = payload::prefix_len_bytes(kb);
    let file = File::open(&path)
        .await
        .map_err(|e| payload::unreadable(&path, &e))?;
    let BufResult(read, bytes) = file.read_exact_at(Vec::with_capacity(len_bytes), 0).await;
    let _ = file.close().await;
    read.map_err(|e| payload::unreadable(&path, &e))?;
    Ok(Reply::file(bytes))
}

fn unreachable_upload() -> Reply {
    Reply::error(&ContractError::Internal {
        message: "upload routed past the connection".into(),
    })
}
