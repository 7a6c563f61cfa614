//! Errors that stop a load run before or while it starts. Failed requests are
//! never errors: they are counted in the report.

use std::io;
use std::net::SocketAddr;

use crate::SPARE_FDS;

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
    #[error("{}", fd_advice(*.connections, *.needed, *.limit, *.kernel_max))]
    FdLimit {
        connections: u32,
        needed: u64,
        /// The soft limit in force (already raised to the hard limit).
        limit: u64,
        /// `/proc/sys/fs/nr_open`: no `ulimit -n` can go above it.
        kernel_max: Option<u64>,
    },
    /// The operating system refused a resource the generator needs.
    #[error("{context}: {source}")]
    Os { context: String, source: io::Error },
    /// A generator thread died unexpectedly.
    #[error("a generator thread failed: {0}")]
    Thread(String),
    /// TLS cannot be set up as asked, or the server's handshake failed
    /// before the load.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
}

impl LoadError {
    pub(crate) fn os(context: impl Into<String>, source: io::Error) -> Self {
        Self::Os {
            context: context.into(),
            source,
        }
    }
}

/// What to do about too few file descriptors: never advise a limit above
/// the kernel's ceiling (`fs.nr_open`), and say so when the request is above it.
fn fd_advice(connections: u32, needed: u64, limit: u64, kernel_max: Option<u64>) -> String {
    let fit_now = limit.saturating_sub(SPARE_FDS);
    let head = format!(
        "{connections} connections (-c) need about {needed} file descriptors, but the limit is \
         {limit}: use at most {fit_now} connections (-c)"
    );
    match kernel_max {
        Some(kernel_max) if needed > kernel_max => {
            let raise = if kernel_max > limit {
                format!(
                    ", or at most {} after raising the limit to the kernel's ceiling with \
                     `ulimit -n {kernel_max}` (as root, or in /etc/security/limits.conf)",
                    kernel_max.saturating_sub(SPARE_FDS)
                )
            } else {
                String::new()
            };
            format!(
                "{head}{raise}; {needed} is above what this kernel allows any process \
                 (fs.nr_open = {kernel_max})"
            )
        }
        _ => format!(
            "{head}, or raise the limit with `ulimit -n {needed}` (as root, or in \
             /etc/security/limits.conf)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fd_advice_stays_under_the_kernel_ceiling() {
        let within = fd_advice(30_000, 30_064, 20_000, Some(1_048_576));
        assert!(within.contains("ulimit -n 30064"), "{within}");
        assert!(
            within.contains("at most 19936 connections (-c)"),
            "{within}"
        );

        let above = fd_advice(u32::MAX, 4_294_967_359, 20_000, Some(1_048_576));
        assert!(!above.contains("ulimit -n 4294967359"), "{above}");
        assert!(above.contains("ulimit -n 1048576"), "{above}");
        assert!(above.contains("at most 1048512 after raising"), "{above}");
        assert!(above.contains("fs.nr_open = 1048576"), "{above}");

        let at_ceiling = fd_advice(2_000_000, 2_000_064, 1_048_576, Some(1_048_576));
        assert!(!at_ceiling.contains("ulimit -n"), "{at_ceiling}");
        assert!(
            at_ceiling.contains("at most 1048512 connections (-c)"),
            "{at_ceiling}"
        );
    }
}
