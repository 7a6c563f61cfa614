//! The connection loop of the raw-socket targets, generic over how a
//! completion-based runtime reads, writes and stores uploads.
//!
//! Read into one buffer, answer every complete request in it in order
//! (pipelining), write the answers with one send, read again. Bodies are
//! read exactly, never past their end, so the next request stays intact.
//! The runtime supplies owned-buffer I/O ([`Transport`], [`UploadFile`])
//! and the endpoints' waiting and file work ([`Endpoints`]); every future
//! here runs on the connection's own thread.
// The traits are implemented by single-threaded runtimes whose futures are
// deliberately not `Send`.
#![allow(async_fn_in_trait)]

use std::io;
use std::path::Path;

use crate::http1::{CONTINUE, Parsed, RequestHead, parse_head, write_head, write_reply};
use crate::upload::{UploadDigest, temp_path, unwritable};
use crate::{ContractError, Reply, Route};

/// Bytes one read may add to the input buffer.
pub const READ_CHUNK_BYTES: usize = 16 * 1024;
/// Upload bytes read from the socket and written to the file per round.
pub const UPLOAD_CHUNK_BYTES: usize = 256 * 1024;
/// Bodies larger than this are sent from their own buffer, not copied.
const COPY_BODY_LIMIT_BYTES: usize = 64 * 1024;

/// A connected socket with owned-buffer I/O (io_uring keeps the buffer
/// while the kernel works on it, so it is passed in and handed back).
pub trait Transport {
    /// Reads at most `max` bytes behind the bytes already in `buf`.
    /// `Ok(0)` is the end of the stream.
    async fn read_append(&mut self, buf: Vec<u8>, max: usize) -> (io::Result<usize>, Vec<u8>);
    /// Writes all of `buf`.
    async fn write_all(&mut self, buf: Vec<u8>) -> (io::Result<()>, Vec<u8>);
    /// Closes the socket once its connection is over. Dropping it closes it
    /// too; a runtime that closes through its ring says so here.
    async fn close(self)
    where
        Self: Sized,
    {
    }
}

/// A temporary upload file being written.
pub trait UploadFile {
    async fn write_all_at(&mut self, buf: Vec<u8>, offset_bytes: u64) -> (io::Result<()>, Vec<u8>);
}

/// The runtime's primitives behind the endpoints. [`answer`] composes them
/// the same way for every thread-per-core target.
pub trait Endpoints {
    type File: UploadFile;
    /// The `Server` header (`TARGET_NAME`).
    fn server_name(&self) -> &str;
    /// The model id `/stats` reports.
    fn model(&self) -> &'static str;
    fn upload_dir(&self) -> &Path;
    /// Waits in the runtime's own timer (the task parks, the thread goes on).
    async fn sleep(&self, wait_ms: u32);
    /// The first `len_bytes` of `payload.bin`, read for this request.
    async fn read_payload(&self, len_bytes: usize) -> Result<Vec<u8>, ContractError>;
    /// One random row of `world` through this thread's pool.
    async fn world(&self) -> Result<Reply, ContractError>;
    async fn create_upload(&self, path: &Path) -> io::Result<Self::File>;
    /// Closes and removes an upload file, whatever became of it.
    async fn remove_upload(&self, file: Self::File, path: &Path);
}

/// Answers every route but [`Route::Upload`], which the connection loop
/// streams itself.
pub async fn answer<E: Endpoints>(endpoints: &E, route: Route) -> Result<Reply, ContractError> {
    Ok(match route {
        Route::Healthz => Reply::healthz(),
        Route::Plaintext => Reply::plaintext(),
        Route::Json => Reply::json(),
        Route::Io { wait_ms } => {
            endpoints.sleep(wait_ms).await;
            Reply::io(wait_ms)
        }
        Route::Mixed { iters, wait_ms } => {
            // Hashing on the runtime thread blocks its ring: every
            // connection of the thread waits. That is the model's truth.
            let digest = crate::digest::hex_lower(&crate::digest::sha256_chain(iters));
            endpoints.sleep(wait_ms).await;
            Reply::mixed(&digest, iters, wait_ms)
        }
        Route::File { kb } => Reply::file(
            endpoints
                .read_payload(crate::payload::prefix_len_bytes(kb))
                .await?,
        ),
        Route::Db => endpoints.world().await?,
        Route::Stats => Reply::stats(&crate::reply::Stats {
            model: endpoints.model(),
            threads: crate::proc_status::thread_count(),
            tasks: Some(crate::tasks::alive()),
            heap_bytes: None,
        }),
        Route::Upload => Reply::error(&ContractError::Internal {
            message: "upload routed past the connection loop".into(),
        }),
    })
}

/// Serves one connection until the client closes it, asks to close it, or
/// sends something that cannot be framed. An `Err` is the socket's.
pub async fn serve_connection<T: Transport, E: Endpoints>(
    transport: &mut T,
    endpoints: &E,
) -> io::Result<()> {
    let mut connection = Connection {
        transport,
        endpoints,
        input: Vec::with_capacity(READ_CHUNK_BYTES),
        output: Vec::with_capacity(READ_CHUNK_BYTES),
    };
    connection.run().await
}

struct Connection<'a, T, E> {
    transport: &'a mut T,
    endpoints: &'a E,
    /// Received bytes not yet consumed, from the front.
    input: Vec<u8>,
    /// Answers not yet written, in request order.
    output: Vec<u8>,
}

impl<T: Transport, E: Endpoints> Connection<'_, T, E> {
    async fn run(&mut self) -> io::Result<()> {
        loop {
            while let Some(keep_alive) = self.answer_next().await? {
                if !keep_alive {
                    return self.flush().await;
                }
            }
            self.flush().await?;
            if self.fill().await? == 0 {
                return Ok(());
            }
        }
    }

    /// Answers the request at the front of the input, if it is complete:
    /// `Some(keep_alive)` when one was answered, `None` when more is needed.
    async fn answer_next(&mut self) -> io::Result<Option<bool>> {
        let head = match parse_head(&self.input) {
            Ok(Parsed::Partial) => return Ok(None),
            Ok(Parsed::Complete(head)) => head,
            Err(error) => {
                // Where the next request starts is unknown: answer and close.
                self.queue(Reply::error(&error), false, false).await?;
                return Ok(Some(false));
            }
        };
        self.input.drain(..head.head_len);
        let (reply, keep_alive) = self.reply_to(&head).await?;
        self.queue(reply, keep_alive, head.head_only).await?;
        Ok(Some(keep_alive))
    }

    async fn reply_to(&mut self, head: &RequestHead) -> io::Result<(Reply, bool)> {
        if head.expects_continue && head.body_len > 0 {
            self.output.extend_from_slice(CONTINUE);
            self.flush().await?;
        }
        match &head.route {
            Ok(Route::Upload) => {
                let outcome = self.receive_upload(head.body_len).await?;
                // A failed upload may leave body bytes unread: close.
                let keep_alive = head.keep_alive && outcome.is_ok();
                Ok((outcome.unwrap_or_else(|e| Reply::error(&e)), keep_alive))
            }
            Ok(route) => {
                self.discard_body(head.body_len).await?;
                let reply = answer(self.endpoints, *route).await;
                Ok((reply.unwrap_or_else(|e| Reply::error(&e)), head.keep_alive))
            }
            Err(error) => {
                self.discard_body(head.body_len).await?;
                Ok((Reply::error(error), head.keep_alive))
            }
        }
    }

    /// Appends an answer; a large body is sent at once from its own buffer
    /// (after everything queued before it) instead of being copied.
    async fn queue(&mut self, reply: Reply, keep_alive: bool, head_only: bool) -> io::Result<()> {
        let server = self.endpoints.server_name();
        if head_only || reply.body.len() <= COPY_BODY_LIMIT_BYTES {
            write_reply(&mut self.output, &reply, server, keep_alive, head_only);
            return Ok(());
        }
        write_head(&mut self.output, &reply, server, keep_alive);
        self.flush().await?;
        self.transport.write_all(reply.body.into_owned()).await.0
    }

    async fn flush(&mut self) -> io::Result<()> {
        if self.output.is_empty() {
            return Ok(());
        }
        let (written, mut output) = self
            .transport
            .write_all(std::mem::take(&mut self.output))
            .await;
        output.clear();
        self.output = output;
        written
    }

    /// Reads more bytes behind the unconsumed input; 0 means end of stream.
    async fn fill(&mut self) -> io::Result<usize> {
        let (read, input) = self
            .transport
            .read_append(std::mem::take(&mut self.input), READ_CHUNK_BYTES)
            .await;
        self.input = input;
        read
    }

    /// Takes up to `max` body bytes into `chunk`: first from the input,
    /// else with one read. Empty only at the end of the stream.
    async fn body_chunk(&mut self, max: usize, mut chunk: Vec<u8>) -> io::Result<Vec<u8>> {
        chunk.clear();
        if !self.input.is_empty() {
            let take = max.min(self.input.len());
            chunk.extend_from_slice(&self.input[..take]);
            self.input.drain(..take);
            return Ok(chunk);
        }
        let (read, chunk) = self.transport.read_append(chunk, max).await;
        read.map(|_| chunk)
    }

    async fn discard_body(&mut self, body_len: u64) -> io::Result<()> {
        let mut remaining = body_len;
        let mut chunk = Vec::new();
        while remaining > 0 {
            let max = usize::try_from(remaining)
                .unwrap_or(usize::MAX)
                .min(READ_CHUNK_BYTES);
            chunk = self.body_chunk(max, chunk).await?;
            if chunk.is_empty() {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            remaining -= chunk.len() as u64;
        }
        Ok(())
    }

    /// Streams `body_len` bytes (already checked against the limit) to a
    /// temporary file. The outer error is the socket's; the inner one is
    /// the answer to send.
    async fn receive_upload(&mut self, body_len: u64) -> io::Result<Result<Reply, ContractError>> {
        let path = temp_path(self.endpoints.upload_dir());
        let mut file = match self.endpoints.create_upload(&path).await {
            Ok(file) => file,
            Err(error) => return Ok(Err(unwritable(&path, &error))),
        };
        let outcome = self.copy_body(&mut file, body_len, &path).await;
        // Removed whatever happened, before the answer goes out.
        self.endpoints.remove_upload(file, &path).await;
        outcome
    }

    async fn copy_body(
        &mut self,
        file: &mut E::File,
        body_len: u64,
        path: &Path,
    ) -> io::Result<Result<Reply, ContractError>> {
        let mut digest = UploadDigest::default();
        let mut chunk = Vec::with_capacity(UPLOAD_CHUNK_BYTES);
        while digest.bytes() < body_len {
            let remaining = body_len - digest.bytes();
            let max = usize::try_from(remaining)
                .unwrap_or(usize::MAX)
                .min(UPLOAD_CHUNK_BYTES);
            chunk = self.body_chunk(max, chunk).await?;
            if chunk.is_empty() {
                return Ok(Err(ended_early(digest.bytes(), body_len)));
            }
            let offset = digest.bytes();
            digest.update(&chunk);
            let (written, returned) = file.write_all_at(chunk, offset).await;
            chunk = returned;
            if let Err(error) = written {
                return Ok(Err(unwritable(path, &error)));
            }
        }
        Ok(Ok(digest.finish()))
    }
}

fn ended_early(received: u64, declared: u64) -> ContractError {
    ContractError::Malformed {
        message: format!("request body ended after {received} of {declared} bytes"),
    }
}

#[cfg(test)]
#[path = "serve_tests.rs"]
mod tests;
