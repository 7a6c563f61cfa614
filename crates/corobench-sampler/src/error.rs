//! What can go wrong while reading `/proc`.

use std::io;
use std::time::Duration;

/// A `/proc` file did not have the shape the kernel documents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// `stat` has no `(` opening the command name.
    #[error("no `(` opening the command name")]
    NoCommStart,
    /// `stat` has no `)` after the `(` that opens the command name.
    #[error("no `)` closing the command name (truncated?)")]
    NoCommEnd,
    /// A field the sampler needs is absent.
    #[error("field `{field}` is missing (truncated?)")]
    Missing { field: &'static str },
    /// A field is present but not a number.
    #[error("field `{field}` is not a number: `{value}`")]
    NotANumber { field: &'static str, value: String },
    /// The process state is not a single letter.
    #[error("field `state` is not a single letter: `{value}`")]
    BadState { value: String },
}

/// Sampling could not start or could not go on.
#[derive(Debug, thiserror::Error)]
pub enum SamplerError {
    #[error("process group {pgid} is not a valid target group: it must be a positive pid")]
    InvalidGroup { pgid: u32 },
    #[error("sampling interval {interval:?} is too short: use at least 1 ms")]
    InvalidInterval { interval: Duration },
    #[error(
        "process group {pgid} has no live processes: the target exited before it could be sampled"
    )]
    GroupEmpty { pgid: u32 },
    #[error("could not read {path}: {source}; is /proc mounted and readable by this user?")]
    Read { path: String, source: io::Error },
    #[error("could not parse {path}: {source}; this kernel's /proc format is not understood")]
    Parse { path: String, source: ParseError },
    #[error("the system did not report {what}: {source}")]
    System {
        what: &'static str,
        source: io::Error,
    },
    #[error("could not start the sampler thread: {0}")]
    Spawn(io::Error),
    #[error("the sampler thread panicked; the resource series of this window is lost")]
    ThreadPanicked,
}
