//! `rust-compio`: thread-per-core on io_uring with compio.
//!
//! `THREADS` OS threads each own a compio runtime (one io_uring) and their
//! own `SO_REUSEPORT` listener; the kernel spreads new connections over the
//! listeners and a connection never leaves the thread that accepted it.
//! The main thread only waits for SIGTERM.

use std::process::ExitCode;

use anyhow::Context as _;
use rust_common::per_thread::{Config, reuse_port_listeners, wait_for_termination};

/// Said at start when HTTP/2 is asked for.
const WHY_NOT_HTTP2: &str = "its own connection loop speaks HTTP/1.1 only (in cleartext or over TLS); no HTTP/2 server was built for it";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("rust-compio: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<()> {
    let config = Config::from_env("rust-compio", WHY_NOT_HTTP2)?;
    let upload_dir = config.upload_dir.clone();
    let listeners = reuse_port_listeners(config.listen, config.port, config.threads)?;
    let _runtime_threads = rust_compio::start_on(config, listeners)?;
    // Runtime threads hold no other state worth flushing: exit at once.
    wait_for_termination("rust-compio", &upload_dir).context("cannot watch SIGTERM")
}
