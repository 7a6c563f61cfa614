//! Why no profile could be taken or drawn.

use std::io;

/// Why no profile could be taken or drawn. Each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error(
        "`{program}` is not installed, so no profile was taken; install it (Debian: \
         apt-get install linux-perf, or `make deps`)"
    )]
    PerfMissing { program: String },
    #[error("cannot run `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    /// `advice` is empty or starts with `; `.
    #[error("perf record was refused: {message}{advice}")]
    Refused { message: String, advice: String },
    /// `advice` names the command and how long it was given.
    #[error("perf record hung, so no profile was taken: {advice}")]
    Hung { advice: String },
    #[error("perf record took no sample of the target (did it run on the CPU?)")]
    NoSamples,
    #[error("perf script could not read the recording: {0}")]
    Script(String),
    #[error("no process to profile: the target's process tree is empty")]
    NoProcess,
    #[error("cannot {doing}: {source}")]
    Io {
        doing: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("cannot draw the flame graph: {0}")]
    Render(io::Error),
}
