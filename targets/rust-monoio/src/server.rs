//! Runtime threads: one monoio runtime on its io_uring driver, with its own
//! listener, per thread.

use std::net::TcpListener as StdListener;
use std::rc::Rc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context as _;
use monoio::net::TcpListener;
use rust_common::per_thread::{Config, ThreadContext, fatal, start_threads};

use crate::runtime::{Monoio, spawn_counted};

const TARGET: &str = "rust-monoio";
/// Submission queue entries per ring (monoio's default is 1024).
const RING_ENTRIES: u32 = 1024;

/// Starts one runtime thread per already-bound listener (tests bind port 0).
pub fn start_on(
    config: Config,
    listeners: Vec<StdListener>,
) -> anyhow::Result<Vec<JoinHandle<()>>> {
    eprintln!(
        "{TARGET}: {} runtime thread(s) on 127.0.0.1:{}",
        listeners.len(),
        config.port
    );
    start_threads("monoio", &config, listeners, run_thread).context("cannot start a runtime thread")
}

fn run_thread(config: Config, listener: StdListener) {
    // IoUringDriver only: without io_uring the build fails here, loudly,
    // instead of falling back to epoll.
    let mut runtime = monoio::RuntimeBuilder::<monoio::IoUringDriver>::new()
        .with_entries(RING_ENTRIES)
        .enable_timer()
        .build()
        .unwrap_or_else(|e| fatal(TARGET, &format!("cannot create an io_uring runtime: {e}")));
    runtime.block_on(async move {
        let listener = TcpListener::from_std(listener)
            .unwrap_or_else(|e| fatal(TARGET, &format!("listener: {e}")));
        accept_loop(&listener, &Rc::new(ThreadContext::new(config))).await;
    });
}

async fn accept_loop(listener: &TcpListener, context: &Rc<ThreadContext<Monoio>>) {
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                // Small answers go out at once rather than waiting for Nagle.
                let _ = stream.set_nodelay(true);
                spawn_counted(crate::connection::serve(stream, Rc::clone(context)));
            }
            Err(error) => {
                // Out of descriptors or the like: back off instead of spinning.
                eprintln!("{TARGET}: accept failed: {error}");
                monoio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}
