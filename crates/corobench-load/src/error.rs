//! Errors that stop a load run before or while it starts. Failed requests are
//! never errors: they are counted in the report.

use std::io;
use std::net::SocketAddr;

use crate::SPARE_FDS;

/// A setting of a load, as its configuration names it: what a refused
/// configuration is about, so that a caller can say where it was set (a
/// command's flag, a spec's key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Setting {
    Url,
    Method,
    Header,
    Body,
    Connections,
    Threads,
    Rate,
    /// How far ahead of its time an open-loop request may leave with another.
    Tick,
    Requests,
    Duration,
    Warmup,
    Timeout,
    Pipeline,
    /// A connection per request instead of connections kept alive.
    NoKeepalive,
    Cpus,
    Backend,
    /// HTTP/2 over TLS.
    H2,
    /// Cleartext HTTP/2 by prior knowledge.
    H2c,
    Streams,
    StreamWindow,
    ConnectionWindow,
    MaxFrame,
    Ktls,
    KernelStamps,
    KernelSendStamps,
    StartAt,
    IdleConnections,
    /// The request kept in flight on background streams beside the measured ones.
    Background,
    BackgroundStreams,
}

/// What would get a server that does not speak the protocol asked for
/// measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolFix {
    /// Measure HTTP/1.1 instead.
    Http1,
    /// Ask for HTTP/2 over TLS at its `https://` URL.
    OverTls,
}

/// Why a load run could not run.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A bad value or combination in the configuration, in the crate's own
    /// words; `settings` are the ones it is about.
    #[error("{message}")]
    Config {
        settings: Vec<Setting>,
        message: String,
    },
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
    /// The server does not speak the protocol asked for (`asked`: HTTP/2
    /// over TLS or h2c); the message says what it speaks instead.
    #[error("{message}")]
    Protocol {
        asked: Setting,
        fix: Option<ProtocolFix>,
        message: String,
    },
    /// TLS cannot be set up as asked, or the server's handshake failed
    /// before the load.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
}

impl LoadError {
    /// A refused configuration about `settings`.
    #[must_use]
    pub fn config(settings: &[Setting], message: impl Into<String>) -> Self {
        Self::Config {
            settings: settings.to_vec(),
            message: message.into(),
        }
    }

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
        "{connections} connections need about {needed} file descriptors, but the limit is \
         {limit}: use at most {fit_now} connections"
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
        assert!(within.contains("at most 19936 connections,"), "{within}");

        let above = fd_advice(u32::MAX, 4_294_967_359, 20_000, Some(1_048_576));
        assert!(!above.contains("ulimit -n 4294967359"), "{above}");
        assert!(above.contains("ulimit -n 1048576"), "{above}");
        assert!(above.contains("at most 1048512 after raising"), "{above}");
        assert!(above.contains("fs.nr_open = 1048576"), "{above}");

        let at_ceiling = fd_advice(2_000_000, 2_000_064, 1_048_576, Some(1_048_576));
        assert!(!at_ceiling.contains("ulimit -n"), "{at_ceiling}");
        assert!(
            at_ceiling.contains("at most 1048512 connections;"),
            "{at_ceiling}"
        );
    }
}
