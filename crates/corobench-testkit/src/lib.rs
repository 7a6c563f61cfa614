//! Test servers for corobench's own tests (never a measured target).
//!
//! - [`TestServer`]: an in-process HTTP/1.1 server on `127.0.0.1:0` whose
//!   [`Knobs`] set delays, stalls, closes, chunked bodies, garbage, truncated
//!   bodies, status codes, slow reads, slow accepts and body sizes. For the load
//!   generator's tests.
//! - [`ContractServer`]: a complete, correct implementation of
//!   `docs/contract.md`, with [`Fault`]s that each break one rule. For the
//!   verifier's tests.
//! - [`TestProcess`]: the knob server in a child process, when the client
//!   needs this process's file descriptors for itself.
//! - The `corobench-testkit` binary serves the contract server as a real
//!   target process (and, as `corobench-testkit knobs FLAGS`, the knob
//!   server); [`binary_path`] builds it and says where it is, and
//!   [`write_target`] writes a `target.toml` that runs it.

mod binary;
mod client;
mod contract;
mod h2flow;
mod h2wire;
mod http;
mod knobs;
mod process;
mod server;
mod tls;

pub use binary::{binary_path, write_program_target, write_target};
pub use client::{ClientFigures, NotHttp, run_client};
pub use contract::{ContractConfig, ContractServer, Fault, MemoryWorld, PsqlWorld, WorldSource};
pub use knobs::{H2Knobs, Knobs, SlowAccept, SlowRead, Stall};
pub use process::{KnobError, TestProcess, knob_args, parse_knob_args};
pub use server::{CounterSnapshot, MAX_TARGETS_KEPT, StallHandle, TestServer};
pub use tls::{CertKind, TestCerts, TlsKnobs, certifies, server_config};
