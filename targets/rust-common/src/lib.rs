//! The HTTP contract (`docs/contract.md`) as the Rust targets share it.
//!
//! Everything here is free of any async runtime, so that `rust-axum` (tokio)
//! and `rust-compio` (io_uring) answer byte for byte alike and differ only in
//! how they wait, read and write. Each target keeps its own concurrency code.

pub mod date;
pub mod db;
pub mod digest;
pub mod env;
pub mod error;
#[cfg(feature = "http1")]
pub mod http1;
pub mod params;
pub mod payload;
#[cfg(feature = "per-thread")]
pub mod per_thread;
#[cfg(feature = "pg-local")]
pub mod pg_local;
pub mod proc_status;
pub mod protocol;
#[cfg(all(feature = "testing-tls", feature = "per-thread"))]
pub mod raw_suite;
pub mod reply;
pub mod route;
#[cfg(feature = "http1")]
pub mod serve;
pub mod tasks;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "testing-tls")]
pub mod testing_tls;
#[cfg(feature = "tls")]
pub mod tls;
pub mod upload;

pub use error::ContractError;
pub use reply::Reply;
pub use route::{Method, Route};
