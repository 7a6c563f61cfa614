//! `rust-axum`: axum on tokio's multi-thread work-stealing runtime.
//!
//! Every connection is a tokio task; `WORKER_THREADS` OS threads run the
//! tasks and steal from each other's queues when idle.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use axum::serve::ListenerExt as _;
use rust_common::env::{ServerEnv, int_param};
use tokio::signal::unix::{SignalKind, signal};

/// How long in-flight blocking work (file reads, upload writes) may finish
/// after SIGTERM; well inside the contract's 5 s.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("rust-axum: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<()> {
    let env = ServerEnv::from_env()?;
    let worker_threads = int_param("WORKER_THREADS", 1, 1..=256)?;
    let db_pool = int_param("DB_POOL", 16, 1..=1024)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads as usize)
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let result = runtime.block_on(serve(env, db_pool as usize));
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    result
}

async fn serve(env: ServerEnv, db_pool: usize) -> anyhow::Result<()> {
    let router = rust_axum::router(&env, db_pool)?;
    let tls_config = env
        .protocols
        .tls
        .as_ref()
        .map(|files| rust_common::tls::server_config(files, env.protocols.http))
        .transpose()?;
    let upload_dir = env.upload_dir.clone();
    let address = std::net::SocketAddr::from((env.listen, env.port));
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot listen on {address} (LISTEN_ADDR, PORT)"))?
        .tap_io(|stream| {
            // Small answers go out at once, as in the raw-socket targets.
            let _ = stream.set_nodelay(true);
        });
    let mut terminate = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    eprintln!(
        "rust-axum: listening on {address} ({})",
        env.protocols.describe()
    );
    // Cleartext serves HTTP/1.1 and, by prior knowledge, h2c on one port.
    let served = async {
        match tls_config {
            None => axum::serve(listener, router)
                .await
                .context("server stopped"),
            Some(config) => {
                rust_axum::serve_tls(listener, router, config).await;
                Ok(())
            }
        }
    };
    tokio::select! {
        served = served => served,
        _ = terminate.recv() => {
            let removed = rust_common::upload::remove_own_temp_files(&upload_dir);
            eprintln!("rust-axum: SIGTERM, exiting ({removed} unfinished upload file(s) removed)");
            Ok(())
        }
    }
}
