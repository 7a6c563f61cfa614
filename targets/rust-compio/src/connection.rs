//! One HTTP/1.1 connection's socket for `rust-common`'s connection loop:
//! every read, write and the close submitted to this thread's io_uring.

use std::io;

use compio::BufResult;
use compio::buf::{IntoInner as _, IoBuf as _};
use compio::io::{AsyncRead as _, AsyncWriteExt as _};
use compio::net::TcpStream;
use rust_common::serve::Transport;

/// A compio socket as the connection loop's transport.
#[derive(Debug)]
pub struct CompioSocket(pub(crate) TcpStream);

impl Transport for CompioSocket {
    async fn read_append(&mut self, mut buf: Vec<u8>, max: usize) -> (io::Result<usize>, Vec<u8>) {
        let start = buf.len();
        buf.reserve(max);
        // The slice covers the spare capacity: the kernel writes behind the
        // bytes already there, and the length grows by what it read.
        let BufResult(read, slice) = self.0.read(buf.slice(start..start + max)).await;
        (read, slice.into_inner())
    }

    async fn write_all(&mut self, buf: Vec<u8>) -> (io::Result<()>, Vec<u8>) {
        let BufResult(written, buf) = self.0.write_all(buf).await;
        (written, buf)
    }

    async fn close(self) {
        let _ = self.0.close().await;
    }
}
