//! compio's primitives for `rust-common`'s thread-per-core composition:
//! the listener, the timer, file I/O, sockets for the database, timeouts
//! and spawning, all on this thread and, for I/O, through its io_uring.

use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use compio::BufResult;
use compio::buf::{IntoInner as _, IoBuf as _};
use compio::fs::File;
use compio::io::compat::AsyncStream;
use compio::io::{AsyncReadAtExt as _, AsyncWriteAtExt as _};
use compio::net::{TcpListener, TcpStream};
use compio::tls::TlsAcceptor;
use rust_common::per_thread::Runtime;
use rust_common::pg_local::PgRuntime;
use rust_common::serve::UploadFile;
use rust_common::tasks::counted;
use tokio_util::compat::{Compat, FuturesAsyncReadCompatExt as _};

use crate::connection::{CompioSocket, CompioTlsSocket};

/// compio, as the runtime of every thread of this target.
#[derive(Debug)]
pub struct Compio;

impl Runtime for Compio {
    const MODEL: &'static str = "thread-per-core-io-uring";
    type Listener = TcpListener;
    type Socket = CompioSocket;
    type File = CompioFile;

    fn listener(listener: StdListener) -> io::Result<TcpListener> {
        TcpListener::from_std(listener)
    }

    async fn accept(listener: &TcpListener) -> io::Result<CompioSocket> {
        let (stream, _peer) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        Ok(CompioSocket(stream))
    }

    async fn sleep(wait_ms: u32) {
        compio::time::sleep(Duration::from_millis(wait_ms.into())).await;
    }

    async fn read_prefix(path: &Path, len_bytes: usize) -> io::Result<Vec<u8>> {
        let file = File::open(path).await?;
        // The slice bounds the read to exactly `len_bytes`, whatever the
        // allocation's capacity.
        let buffer = Vec::with_capacity(len_bytes).slice(..len_bytes);
        let BufResult(read, bytes) = file.read_exact_at(buffer, 0).await;
        let _ = file.close().await;
        read.map(|()| bytes.into_inner())
    }

    async fn create_file(path: &Path) -> io::Result<CompioFile> {
        File::create(path).await.map(CompioFile)
    }

    async fn remove_file(file: CompioFile, path: &Path) {
        let _ = file.0.close().await;
        let _ = compio::fs::remove_file(path).await;
    }

    type TlsAcceptor = TlsAcceptor;
    type TlsSocket = CompioTlsSocket;

    fn tls_acceptor(config: Arc<rustls::ServerConfig>) -> TlsAcceptor {
        TlsAcceptor::from(config)
    }

    async fn tls_handshake(
        acceptor: &TlsAcceptor,
        socket: CompioSocket,
    ) -> io::Result<CompioTlsSocket> {
        acceptor.accept(socket.0).await.map(CompioTlsSocket)
    }
}

/// The database socket is a compio `TcpStream` bridged to tokio-io traits by
/// compio's `io-compat` stream (futures-io) and tokio-util's `compat()`.
impl PgRuntime for Compio {
    type Stream = Compat<Pin<Box<AsyncStream<TcpStream>>>>;

    async fn connect(address: SocketAddr) -> io::Result<Self::Stream> {
        let stream = TcpStream::connect(address).await?;
        stream.set_nodelay(true)?;
        // The compat stream is not Unpin; boxing it is.
        Ok(Box::pin(AsyncStream::new(stream)).compat())
    }

    fn spawn(task: impl Future<Output = ()> + 'static) {
        compio::runtime::spawn(counted(task)).detach();
    }

    async fn timeout<F: Future>(duration: Duration, future: F) -> Option<F::Output> {
        compio::time::timeout(duration, future).await.ok()
    }
}

/// An upload's temporary file, written through the ring.
#[derive(Debug)]
pub struct CompioFile(File);

impl UploadFile for CompioFile {
    async fn write_all_at(&mut self, buf: Vec<u8>, offset_bytes: u64) -> (io::Result<()>, Vec<u8>) {
        let BufResult(written, buf) = self.0.write_all_at(buf, offset_bytes).await;
        (written, buf)
    }
}
