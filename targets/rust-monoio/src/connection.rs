//! One HTTP/1.1 connection's socket for `rust-common`'s connection loop:
//! every read and write submitted to this thread's io_uring; dropping the
//! socket closes it.

use std::io;

use monoio::buf::{IoBufMut as _, SliceMut};
use monoio::io::{AsyncReadRent as _, AsyncWriteRentExt as _};
use monoio::net::TcpStream;
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
