//! One HTTP/1.1 connection: read, answer every complete request in order
//! (pipelining), write the answers in one batch, read again.

use std::io;
use std::rc::Rc;

use compio::BufResult;
use compio::buf::{IntoInner as _, IoBuf as _};
use compio::io::{AsyncRead as _, AsyncReadExt as _, AsyncWriteExt as _};
use compio::net::TcpStream;
use rust_common::http1::{CONTINUE, Parsed, RequestHead, parse_head, write_head, write_reply};
use rust_common::{ContractError, Reply, Route};

use crate::server::ThreadContext;

/// Bytes a read may add to the input buffer.
const READ_CHUNK_BYTES: usize = 16 * 1024;
/// Bodies larger than this are written straight from their own buffer
/// instead of being copied behind the head.
const COPY_BODY_LIMIT_BYTES: usize = 64 * 1024;

pub(crate) struct Connection {
    stream: TcpStream,
    /// Received bytes not yet consumed, from the front.
    input: Vec<u8>,
    /// Answers not yet written, in request order.
    output: Vec<u8>,
    pub(crate) context: Rc<ThreadContext>,
}

pub(crate) async fn serve(stream: TcpStream, context: Rc<ThreadContext>) {
    let mut connection = Connection {
        stream,
        input: Vec::with_capacity(READ_CHUNK_BYTES),
        output: Vec::with_capacity(READ_CHUNK_BYTES),
        context,
    };
    // A reset or a half-written answer only ends this connection.
    let _ = connection.run().await;
    let _ = connection.stream.close().await;
}

impl Connection {
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

    /// Answers the request at the front of the input, if it is complete.
    /// `Some(keep_alive)` when one was answered, `None` when more is needed.
    async fn answer_next(&mut self) -> io::Result<Option<bool>> {
        let head = match parse_head(&self.input) {
            Ok(Parsed::Partial) => return Ok(None),
            Ok(Parsed::Complete(head)) => head,
            Err(error) => {
                // The next request's start is unknown: answer and close.
                self.queue(Reply::error(&error), false, false).await?;
                return Ok(Some(false));
            }
        };
        self.consume(head.head_len);
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
                let outcome = crate::upload::receive(self, head.body_len).await?;
                // A failed upload may leave body bytes unread: close.
                let keep_alive = head.keep_alive && outcome.is_ok();
                Ok((outcome.unwrap_or_else(|e| Reply::error(&e)), keep_alive))
            }
            Ok(route) => {
                self.discard_body(head.body_len).await?;
                let reply = crate::endpoints::answer(*route, &self.context).await;
                Ok((reply.unwrap_or_else(|e| Reply::error(&e)), head.keep_alive))
            }
            Err(error) => {
                self.discard_body(head.body_len).await?;
                Ok((Reply::error(error), head.keep_alive))
            }
        }
    }

    /// Appends an answer; a large body is written at once from its own
    /// buffer (after everything queued before it) instead of copied.
    async fn queue(&mut self, reply: Reply, keep_alive: bool, head_only: bool) -> io::Result<()> {
        let server = &self.context.config.server_name;
        if head_only || reply.body.len() <= COPY_BODY_LIMIT_BYTES {
            write_reply(&mut self.output, &reply, server, keep_alive, head_only);
            return Ok(());
        }
        write_head(&mut self.output, &reply, server, keep_alive);
        self.flush().await?;
        let BufResult(written, _) = self.stream.write_all(reply.body.into_owned()).await;
        written
    }

    async fn flush(&mut self) -> io::Result<()> {
        if self.output.is_empty() {
            return Ok(());
        }
        let BufResult(written, mut output) = self
            .stream
            .write_all(std::mem::take(&mut self.output))
            .await;
        output.clear();
        self.output = output;
        written
    }

    /// Reads more bytes behind the unconsumed input; 0 means end of stream.
    async fn fill(&mut self) -> io::Result<usize> {
        self.input.reserve(READ_CHUNK_BYTES);
        let BufResult(read, input) = self.stream.append(std::mem::take(&mut self.input)).await;
        self.input = input;
        read
    }

    fn consume(&mut self, len: usize) {
        self.input.drain(..len);
    }

    /// Takes up to `max` body bytes: first from the input buffer, then with
    /// one read that never goes past the body (the next request stays in
    /// the socket). Empty only at end of stream.
    pub(crate) async fn body_chunk(
        &mut self,
        max: usize,
        mut chunk: Vec<u8>,
    ) -> io::Result<Vec<u8>> {
        chunk.clear();
        if !self.input.is_empty() {
            let take = max.min(self.input.len());
            chunk.extend_from_slice(&self.input[..take]);
            self.consume(take);
            return Ok(chunk);
        }
        chunk.reserve(max);
        let BufResult(read, slice) = self.stream.read(chunk.slice(..max)).await;
        read?;
        Ok(slice.into_inner())
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
}

/// An upload cut short by the client.
pub(crate) fn body_ended_early(received: u64, declared: u64) -> ContractError {
    ContractError::Malformed {
        message: format!("request body ended after {received} of {declared} bytes"),
    }
}
