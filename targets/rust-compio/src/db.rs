//! `/db` without leaving the thread: `rust-common`'s per-thread pool runs
//! tokio-postgres over a compio socket, bridged by compio's `io-compat`
//! stream (futures-io traits) and tokio-util's `compat()` (tokio-io traits).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;

use compio::io::compat::AsyncStream;
use compio::net::TcpStream;
use rust_common::pg_local::{LocalPool, PgRuntime};
use tokio_util::compat::{Compat, FuturesAsyncReadCompatExt as _};

use crate::tasks::spawn_counted;

/// compio as the pool's runtime: socket, timer and spawn of this thread.
#[derive(Debug)]
pub(crate) struct CompioPg;

pub(crate) type Pool = LocalPool<CompioPg>;

impl PgRuntime for CompioPg {
    type Stream = Compat<Pin<Box<AsyncStream<TcpStream>>>>;

    async fn connect(address: SocketAddr) -> io::Result<Self::Stream> {
        let stream = TcpStream::connect(address).await?;
        stream.set_nodelay(true)?;
        // The compat stream is not Unpin; boxing it is.
        Ok(Box::pin(AsyncStream::new(stream)).compat())
    }

    fn spawn_driver(driver: impl Future<Output = ()> + 'static) {
        spawn_counted(driver);
    }

    async fn timeout<F: Future>(duration: Duration, future: F) -> Option<F::Output> {
        compio::time::timeout(duration, future).await.ok()
    }
}
