//! `POST /upload`: the body is streamed to a temporary file while hashed,
//! never held whole in memory.

use std::path::Path;

use axum::extract::Request;
use axum::http::header::CONTENT_LENGTH;
use futures_util::StreamExt as _;
use rust_common::upload::{UploadDigest, check_declared_len, temp_path, unwritable};
use rust_common::{ContractError, Reply};
use tokio::io::{AsyncWriteExt as _, BufWriter};

/// Writes go to the blocking pool; batching them to this size keeps the
/// number of hops per upload small.
const WRITE_BUFFER_BYTES: usize = 256 * 1024;

pub async fn receive(upload_dir: &Path, request: Request) -> Result<Reply, ContractError> {
    if let Some(declared_bytes) = declared_len(&request)? {
        // Answered before a byte of the body is read.
        check_declared_len(declared_bytes)?;
    }
    let path = temp_path(upload_dir);
    let result = stream_to_file(&path, request).await;
    // Removed whatever happened; a file that was never created is fine.
    let _ = tokio::fs::remove_file(&path).await;
    result
}

fn declared_len(request: &Request) -> Result<Option<u64>, ContractError> {
    let Some(value) = request.headers().get(CONTENT_LENGTH) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .map(Some)
        .ok_or_else(|| ContractError::Malformed {
            message: "Content-Length must be a non-negative integer".into(),
        })
}

async fn stream_to_file(path: &Path, request: Request) -> Result<Reply, ContractError> {
    let file = tokio::fs::File::create(path)
        .await
        .map_err(|e| unwritable(path, &e))?;
    let mut file = BufWriter::with_capacity(WRITE_BUFFER_BYTES, file);
    let mut digest = UploadDigest::default();
    let mut body = request.into_body().into_data_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| ContractError::Malformed {
            message: format!("request body ended early: {e}"),
        })?;
        digest.update(&chunk);
        // Only bites for bodies without Content-Length (chunked).
        digest.check_limit()?;
        file.write_all(&chunk)
            .await
            .map_err(|e| unwritable(path, &e))?;
    }
    file.flush().await.map_err(|e| unwritable(path, &e))?;
    Ok(digest.finish())
}
