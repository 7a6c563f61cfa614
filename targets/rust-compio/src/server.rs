//! Runtime threads: one compio runtime, one io_uring and one listener each.

use std::net::TcpListener as StdListener;
use std::rc::Rc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context as _;
use compio::net::TcpListener;
use rust_common::per_thread::{Config, ThreadContext, fatal, start_threads};

use crate::runtime::{Compio, spawn_counted};

const TARGET: &str = "rust-compio";

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
    start_threads("compio", &config, listeners, run_thread).context("cannot start a runtime thread")
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
    runtime.block_on(async move {
        let listener = TcpListener::from_std(listener)
            .unwrap_or_else(|e| fatal(TARGET, &format!("listener: {e}")));
        accept_loop(&listener, &Rc::new(ThreadContext::new(config))).await;
    });
}

async fn accept_loop(listener: &TcpListener, context: &Rc<ThreadContext<Compio>>) {
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
                compio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}
