//! What can go wrong while reading `/proc`.

use std::io;
use std::time::Duration;

use corobench_target::procfs::ParseError;

/// Sampling could not start or could not go on.
#[derive(Debug, thiserror::Error)]
pub enum SamplerError {
    #[error("process group {pgid} is not a valid target group: it must be a positive pid")]
    InvalidGroup { pgid: i64 },
    #[error("sampling interval {interval:?} is too short: use at least 1 ms")]
    InvalidInterval { interval: Duration },
    #[error(
        "process group {pgid} has no live processes: the target exited before it could be sampled"
    )]
    GroupEmpty { pgid: i32 },
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
