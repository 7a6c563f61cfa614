//! monoio's primitives for `rust-common`'s thread-per-core composition:
//! the listener, the timer, file I/O, sockets for the database, timeouts
//! and spawning, all on this thread and, for I/O, through its io_uring.

use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use monoio::buf::{IoBufMut as _, SliceMut};
use monoio::fs::File;
use monoio::net::{TcpListener, TcpStream};
use monoio_compat::TcpStreamCompat;
use monoio_rustls::TlsAcceptor;
use rust_common::per_thread::Runtime;
use rust_common::pg_local::PgRuntime;
use rust_common::serve::UploadFile;
use rust_common::tasks::counted;

use crate::connection::{MonoioSocket, MonoioTlsSocket};

/// monoio on its io_uring driver, as the runtime of every thread of this target.
#[derive(Debug)]
pub struct Monoio;

impl Runtime for Monoio {
    const MODEL: &'static str = "thread-per-core-io-uring";
    type Listener = TcpListener;
    type Socket = MonoioSocket;
    type File = MonoioFile;

    fn listener(listener: StdListener) -> io::Result<TcpListener> {
        TcpListener::from_std(listener)
    }

    async fn accept(listener: &TcpListener) -> io::Result<MonoioSocket> {
        let (stream, _peer) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        Ok(MonoioSocket(stream))
    }

    async fn sleep(wait_ms: u32) {
        monoio::time::sleep(Duration::from_millis(wait_ms.into())).await;
    }

    async fn read_prefix(path: &Path, len_bytes: usize) -> io::Result<Vec<u8>> {
        let file = File::open(path).await?;
        // The slice bounds the read to exactly `len_bytes`, whatever the
        // allocation's capacity.
        let buffer: SliceMut<Vec<u8>> = Vec::with_capacity(len_bytes).slice_mut(..len_bytes);
        let (read, bytes) = file.read_exact_at(buffer, 0).await;
        let _ = file.close().await;
        read.map(|()| bytes.into_inner())
    }

    async fn create_file(path: &Path) -> io::Result<MonoioFile> {
        File::create(path).await.map(MonoioFile)
    }

    async fn remove_file(file: MonoioFile, path: &Path) {
        let _ = file.0.close().await;
        let _ = monoio::fs::remove_file(path).await;
    }

    type TlsAcceptor = TlsAcceptor;
    type TlsSocket = MonoioTlsSocket;

    fn tls_acceptor(config: Arc<rustls::ServerConfig>) -> TlsAcceptor {
        TlsAcceptor::from(config)
    }

    async fn tls_handshake(
        acceptor: &TlsAcceptor,
        socket: MonoioSocket,
    ) -> io::Result<MonoioTlsSocket> {
        acceptor
            .accept(socket.0)
            .await
            .map(MonoioTlsSocket)
            .map_err(io::Error::other)
    }
}

/// The database socket is a monoio `TcpStream` with tokio-io traits from
/// `monoio-compat` (which copies through its own read and write buffers).
impl PgRuntime for Monoio {
    type Stream = TcpStreamCompat;

    async fn connect(address: SocketAddr) -> io::Result<Self::Stream> {
        let stream = TcpStream::connect(address).await?;
        stream.set_nodelay(true)?;
        Ok(TcpStreamCompat::new(stream))
    }

    fn spawn(task: impl Future<Output = ()> + 'static) {
        // Dropping a monoio JoinHandle detaches the task.
        drop(monoio::spawn(counted(task)));
    }

    async fn timeout<F: Future>(duration: Duration, future: F) -> Option<F::Output> {
        monoio::time::timeout(duration, future).await.ok()
    }
}

/// An upload's temporary file, written through the ring.
#[derive(Debug)]
pub struct MonoioFile(File);

impl UploadFile for MonoioFile {
    async fn write_all_at(&mut self, buf: Vec<u8>, offset_bytes: u64) -> (io::Result<()>, Vec<u8>) {
        self.0.write_all_at(buf, offset_bytes).await
    }
}
