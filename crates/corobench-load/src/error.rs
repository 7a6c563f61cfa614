//! Errors that stop a load run before or while it starts. Failed requests are
//! never errors: they are counted in the report.

use std::io;
use std::net::SocketAddr;

/// Why a load run could not run.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A bad value in the configuration; the message names the flag.
    #[error("{0}")]
    Config(String),
    /// Not even one connection could be opened before the run.
    #[error("cannot connect to {addr}: {source}; is the server running and listening there?")]
    Connect { addr: SocketAddr, source: io::Error },
    /// More connections than file descriptors.
    #[error(
        "{connections} connections need about {needed} file descriptors, but the limit is {limit}; \
         raise it with `ulimit -n {needed}` (as root, or in /etc/security/limits.conf) or use fewer connections (-c)"
    )]
    FdLimit {
        connections: u32,
        needed: u64,
        limit: u64,
    },
    /// The operating system refused a resource the generator needs.
    #[error("{context}: {source}")]
    Os { context: String, source: io::Error },
    /// A generator thread died unexpectedly.
    #[error("a generator thread failed: {0}")]
    Thread(String),
}

impl LoadError {
    pub(crate) fn os(context: impl Into<String>, source: io::Error) -> Self {
        Self::Os {
            context: context.into(),
            source,
        }
    }
}
