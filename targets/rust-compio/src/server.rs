//! Runtime threads: one compio runtime, one io_uring and one listener each.

use std::net::TcpListener as StdListener;
use std::thread::JoinHandle;

use anyhow::Context as _;
use rust_common::per_thread::{Config, fatal, serve_listener, start_threads};

use crate::runtime::Compio;

const TARGET: &str = "rust-compio";

/// Starts one runtime thread per already-bound listener (tests bind port 0).
pub fn start_on(
    config: Config,
    listeners: Vec<StdListener>,
) -> anyhow::Result<Vec<JoinHandle<()>>> {
    start_threads(TARGET, "compio", &config, listeners, run_thread)
        .context("cannot start a runtime thread")
}

fn run_thread(config: Config, listener: StdListener) {
    let runtime = match compio::runtime::Runtime::new() {
        Ok(runtime) if runtime.driver_type().is_iouring() => runtime,
        Ok(_) => fatal(
            TARGET,
            "compio picked a driver other than io_uring; this target measures io_uring only",
        ),
        Err(error) => fatal(
            TARGET,
            &format!("cannot create an io_uring runtime: {error}"),
        ),
    };
    runtime.block_on(serve_listener::<Compio>(TARGET, config, listener));
}
