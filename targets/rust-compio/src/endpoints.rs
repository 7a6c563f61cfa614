//! The endpoints in compio's idiom: timers and file I/O go through the
//! thread's io_uring; CPU work runs on the thread itself.

use std::io;
use std::path::Path;
use std::time::Duration;

use compio::BufResult;
use compio::fs::File;
use compio::io::{AsyncReadAtExt as _, AsyncWriteAtExt as _};
use rust_common::reply::Stats;
use rust_common::serve::{Endpoints, UploadFile};
use rust_common::{ContractError, Reply, Route, digest, payload, proc_status};

use crate::server::ThreadContext;

/// The model id `/stats` reports; equal to `model` in `target.toml`.
const MODEL: &str = "thread-per-core-io-uring";

/// An upload's temporary file, written through the ring.
pub(crate) struct CompioFile(File);

impl UploadFile for CompioFile {
    async fn write_all_at(&mut self, buf: Vec<u8>, offset_bytes: u64) -> (io::Result<()>, Vec<u8>) {
        let BufResult(written, buf) = self.0.write_all_at(buf, offset_bytes).await;
        (written, buf)
    }
}

impl Endpoints for ThreadContext {
    type File = CompioFile;

    fn server_name(&self) -> &str {
        &self.config.server_name
    }

    fn upload_dir(&self) -> &Path {
        &self.config.upload_dir
    }

    async fn answer(&self, route: Route) -> Result<Reply, ContractError> {
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
            Route::File { kb } => self.read_file(kb).await?,
            Route::Db => self.db.random_world().await?,
            Route::Stats => Reply::stats(&Stats {
                model: MODEL,
                threads: proc_status::thread_count(),
                tasks: Some(rust_common::tasks::alive()),
                heap_bytes: None,
            }),
            // The connection loop streams uploads itself.
            Route::Upload => Reply::error(&ContractError::Internal {
                message: "upload routed past the connection loop".into(),
            }),
        })
    }

    async fn create_upload(&self, path: &Path) -> io::Result<CompioFile> {
        File::create(path).await.map(CompioFile)
    }

    async fn remove_upload(&self, file: CompioFile, path: &Path) {
        let _ = file.0.close().await;
        let _ = compio::fs::remove_file(path).await;
    }
}

impl ThreadContext {
    async fn read_file(&self, kb: u32) -> Result<Reply, ContractError> {
        let path = payload::payload_path(&self.config.data_dir);
        let len_bytes = payload::prefix_len_bytes(kb);
        let file = File::open(&path)
            .await
            .map_err(|e| payload::unreadable(&path, &e))?;
        let BufResult(read, bytes) = file.read_exact_at(Vec::with_capacity(len_bytes), 0).await;
        let _ = file.close().await;
        read.map_err(|e| payload::unreadable(&path, &e))?;
        Ok(Reply::file(bytes))
    }
}
