//! `POST /upload` on io_uring: socket reads and file writes alternate
//! through the ring while the body is hashed on this thread.

use std::io;
use std::path::Path;

use compio::BufResult;
use compio::fs::File;
use compio::io::AsyncWriteAtExt as _;
use rust_common::upload::{UploadDigest, temp_path, unwritable};
use rust_common::{ContractError, Reply};

use crate::connection::{Connection, body_ended_early};

/// Bytes read from the socket and written to the file per round.
const CHUNK_BYTES: usize = 256 * 1024;

/// Streams `body_len` bytes (already checked against the limit) to a
/// temporary file. The outer error is the socket's (the connection ends);
/// the inner one is the answer to send.
pub(crate) async fn receive(
    connection: &mut Connection,
    body_len: u64,
) -> io::Result<Result<Reply, ContractError>> {
    let path = temp_path(&connection.context.config.upload_dir);
    let mut file = match File::create(&path).await {
        Ok(file) => file,
        Err(error) => return Ok(Err(unwritable(&path, &error))),
    };
    let outcome = copy_body(connection, &mut file, body_len, &path).await;
    let _ = file.close().await;
    // Removed whatever happened, before the answer goes out.
    let _ = compio::fs::remove_file(&path).await;
    outcome
}

async fn copy_body(
    connection: &mut Connection,
    file: &mut File,
    body_len: u64,
    path: &Path,
) -> io::Result<Result<Reply, ContractError>> {
    let mut digest = UploadDigest::default();
    let mut chunk = Vec::with_capacity(CHUNK_BYTES);
    while digest.bytes() < body_len {
        let remaining = body_len - digest.bytes();
        let max = usize::try_from(remaining)
            .unwrap_or(usize::MAX)
            .min(CHUNK_BYTES);
        chunk = connection.body_chunk(max, chunk).await?;
        if chunk.is_empty() {
            return Ok(Err(body_ended_early(digest.bytes(), body_len)));
        }
        let offset = digest.bytes();
        digest.update(&chunk);
        let BufResult(written, returned) = file.write_all_at(chunk, offset).await;
        chunk = returned;
        if let Err(error) = written {
            return Ok(Err(unwritable(path, &error)));
        }
    }
    Ok(Ok(digest.finish()))
}
