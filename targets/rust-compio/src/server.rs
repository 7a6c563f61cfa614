//! Listeners and runtime threads: one compio runtime, one io_uring and one
//! `SO_REUSEPORT` listener per thread.

use std::net::TcpListener as StdListener;
use std::rc::Rc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context as _;
use compio::net::TcpListener;
use rust_common::per_thread::Config;

use crate::db::Pool;
use crate::tasks::spawn_counted;

/// What one runtime thread shares among its connections (never across threads).
#[derive(Debug)]
pub(crate) struct ThreadContext {
    pub(crate) config: Config,
    pub(crate) db: Pool,
}

/// Starts one runtime thread per already-bound listener (tests bind port 0).
pub fn start_on(
    config: Config,
    listeners: Vec<StdListener>,
) -> anyhow::Result<Vec<JoinHandle<()>>> {
    eprintln!(
        "rust-compio: {} runtime thread(s) on 127.0.0.1:{}",
        listeners.len(),
        config.port
    );
    listeners
        .into_iter()
        .enumerate()
        .map(|(index, listener)| {
            let config = config.clone();
            std::thread::Builder::new()
                .name(format!("compio-{index}"))
                .spawn(move || run_thread(config, listener))
                .context("cannot start a runtime thread")
        })
        .collect()
}

fn run_thread(config: Config, listener: StdListener) {
    let runtime = match compio::runtime::Runtime::new() {
        Ok(runtime) if runtime.driver_type().is_iouring() => runtime,
        Ok(_) => {
            fatal("compio picked a driver other than io_uring; this target measures io_uring only")
        }
        Err(error) => fatal(&format!("cannot create an io_uring runtime: {error}")),
    };
    runtime.block_on(async move {
        let listener =
            TcpListener::from_std(listener).unwrap_or_else(|e| fatal(&format!("listener: {e}")));
        let db = Pool::new(config.db.clone(), config.db_pool_per_thread);
        let context = Rc::new(ThreadContext { config, db });
        accept_loop(&listener, &context).await;
    });
}

async fn accept_loop(listener: &TcpListener, context: &Rc<ThreadContext>) {
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                // Small answers go out at once rather than waiting for Nagle.
                let _ = stream.set_nodelay(true);
                spawn_counted(crate::connection::serve(stream, Rc::clone(context)));
            }
            Err(error) => {
                // Out of descriptors or the like: back off instead of spinning.
                eprintln!("rust-compio: accept failed: {error}");
                compio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

/// A runtime thread cannot serve without its ring: stop the whole process,
/// so corobench sees a failed start rather than a half-served port.
fn fatal(message: &str) -> ! {
    eprintln!("rust-compio: {message}");
    std::process::exit(3)
}
