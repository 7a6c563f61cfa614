//! The monoio target as a library, so tests can run the server in-process.

mod connection;
mod runtime;
mod server;

pub use rust_common::per_thread::Config;
pub use server::start_on;
