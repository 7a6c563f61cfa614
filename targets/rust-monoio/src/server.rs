//! Runtime threads: one monoio runtime on its io_uring driver, with its own
//! listener, per thread.

use std::net::TcpListener as StdListener;
use std::thread::JoinHandle;

use anyhow::Context as _;
use rust_common::per_thread::{Config, fatal, serve_listener, start_threads};

use crate::runtime::Monoio;

const TARGET: &str = "rust-monoio";
/// Submission queue entries per ring (monoio's default is 1024).
const RING_ENTRIES: u32 = 1024;

/// Starts one runtime thread per already-bound listener (tests bind port 0).
pub fn start_on(
    config: Config,
    listeners: Vec<StdListener>,
) -> anyhow::Result<Vec<JoinHandle<()>>> {
    start_threads(TARGET, "monoio", &config, listeners, run_thread)
        .context("cannot start a runtime thread")
}

fn run_thread(config: Config, listener: StdListener) {
    // IoUringDriver only: without io_uring the build fails here, loudly,
    // instead of falling back to epoll.
    let mut runtime = monoio::RuntimeBuilder::<monoio::IoUringDriver>::new()
        .with_entries(RING_ENTRIES)
        .enable_timer()
        .build()
        .unwrap_or_else(|e| fatal(TARGET, &format!("cannot create an io_uring runtime: {e}")));
    runtime.block_on(serve_listener::<Monoio>(TARGET, config, listener));
}
