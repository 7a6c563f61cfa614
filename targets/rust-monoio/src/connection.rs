//! One HTTP/1.1 connection's socket for `rust-common`'s connection loop:
//! every read and write submitted to this thread's io_uring; dropping the
//! socket closes it. Over TLS, monoio-rustls encrypts between the loop and
//! the socket.

use std::io;

use monoio::buf::{IoBufMut as _, SliceMut};
use monoio::io::{AsyncReadRent as _, AsyncWriteRent as _, AsyncWriteRentExt as _};
use monoio::net::TcpStream;
use monoio_rustls::ServerTlsStream;
use rust_common::serve::Transport;

/// A monoio socket as the connection loop's transport.
#[derive(Debug)]
pub struct MonoioSocket(pub(crate) TcpStream);

impl Transport for MonoioSocket {
    async fn read_append(&mut self, mut buf: Vec<u8>, max: usize) -> (io::Result<usize>, Vec<u8>) {
        let start = buf.len();
        buf.reserve(max);
        // The slice covers the spare capacity: the kernel writes behind the
        // bytes already there, and the length grows by what it read.
        let (read, slice): (_, SliceMut<Vec<u8>>) =
            self.0.read(buf.slice_mut(start..start + max)).await;
        (read, slice.into_inner())
    }

    async fn write_all(&mut self, buf: Vec<u8>) -> (io::Result<()>, Vec<u8>) {
        let (written, buf) = self.0.write_all(buf).await;
        (written.map(|_| ()), buf)
    }
}

/// A TLS session on a monoio socket as the connection loop's transport.
pub struct MonoioTlsSocket(pub(crate) ServerTlsStream<TcpStream>);

impl std::fmt::Debug for MonoioTlsSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MonoioTlsSocket")
    }
}

impl Transport for MonoioTlsSocket {
    async fn read_append(&mut self, mut buf: Vec<u8>, max: usize) -> (io::Result<usize>, Vec<u8>) {
        let start = buf.len();
        buf.reserve(max);
        let (read, slice): (_, SliceMut<Vec<u8>>) =
            self.0.read(buf.slice_mut(start..start + max)).await;
        (read, slice.into_inner())
    }

    async fn write_all(&mut self, buf: Vec<u8>) -> (io::Result<()>, Vec<u8>) {
        let (written, buf) = self.0.write_all(buf).await;
        // Whatever rustls still holds goes out before the loop reads again.
        let flushed = match written {
            Ok(_) => self.0.flush().await,
            Err(error) => Err(error),
        };
        (flushed, buf)
    }

    async fn close(mut self) {
        // close_notify and a write shutdown; the socket closes as it drops.
        let _ = self.0.shutdown().await;
    }
}
