//! `rust-compio`: thread-per-core on io_uring with compio.
//!
//! `THREADS` OS threads each own a compio runtime (one io_uring) and their
//! own `SO_REUSEPORT` listener; the kernel spreads new connections over the
//! listeners and a connection never leaves the thread that accepted it.
//! The main thread only waits for SIGTERM.

use std::process::ExitCode;

use anyhow::Context as _;
use rust_common::env::{ServerEnv, int_param};
use signal_hook::consts::{SIGINT, SIGTERM};

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
    let env = ServerEnv::from_env()?;
    let threads = int_param("THREADS", 1, 1..=256)?;
    let db_pool = int_param("DB_POOL", 16, 1..=1024)?;
    let upload_dir = env.upload_dir.clone();
    let config = rust_compio::Config::new(env, threads, db_pool)?;
    // Registered before the runtime threads start, so they inherit nothing
    // and a SIGTERM arriving during start-up is not lost.
    let mut signals =
        signal_hook::iterator::Signals::new([SIGTERM, SIGINT]).context("cannot watch SIGTERM")?;
    let _runtime_threads = rust_compio::start(config)?;
    if let Some(signal) = signals.forever().next() {
        let removed = rust_common::upload::remove_own_temp_files(&upload_dir);
        eprintln!(
            "rust-compio: signal {signal}, exiting ({removed} unfinished upload file(s) removed)"
        );
    }
    // Runtime threads hold no other state worth flushing: exit at once.
    Ok(())
}
