//! One HTTP/1.1 connection's socket for `rust-common`'s connection loop:
//! every read, write and the close submitted to this thread's io_uring;
//! over TLS, compio-tls (rustls) encrypts between the loop and the socket.

use std::io;

use compio::BufResult;
use compio::buf::{IntoInner as _, IoBuf as _};
use compio::io::{AsyncRead as _, AsyncWrite as _, AsyncWriteExt as _};
use compio::net::TcpStream;
use compio::tls::TlsStream;
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

/// A TLS session on a compio socket as the connection loop's transport.
pub struct CompioTlsSocket(pub(crate) TlsStream<TcpStream>);

impl std::fmt::Debug for CompioTlsSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompioTlsSocket")
    }
}

impl Transport for CompioTlsSocket {
    async fn read_append(&mut self, mut buf: Vec<u8>, max: usize) -> (io::Result<usize>, Vec<u8>) {
        let start = buf.len();
        buf.reserve(max);
        let BufResult(read, slice) = self.0.read(buf.slice(start..start + max)).await;
        (read, slice.into_inner())
    }

    async fn write_all(&mut self, buf: Vec<u8>) -> (io::Result<()>, Vec<u8>) {
        let BufResult(written, buf) = self.0.write_all(buf).await;
        // rustls holds the encrypted records until they are flushed.
        let flushed = match written {
            Ok(()) => self.0.flush().await,
            Err(error) => Err(error),
        };
        (flushed, buf)
    }

    async fn close(mut self) {
        // close_notify, then the socket closes as the stream drops.
        let _ = self.0.shutdown().await;
    }
}
