//! Exit codes, and the errors that choose them.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | a check failed (a verify rule, a run where nothing succeeded) or an unexpected error |
//! | 2 | usage or spec error: a bad flag, value or spec file |
//! | 3 | a target or server failed: it did not build, start, become healthy, or accept connections |
//! | 130 | interrupted by Ctrl-C or SIGTERM; completed work was kept |

use std::fmt;
use std::io::Write as _;
use std::process::ExitCode;

/// The documented exit statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    CheckFailed = 1,
    Usage = 2,
    TargetFailed = 3,
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit as u8)
    }
}

/// An error that knows which exit status it deserves.
#[derive(Debug)]
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// A bad flag, value or spec: exit status 2.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    Failure {
        exit: Exit::Usage,
        message: message.into(),
    }
    .into()
}

/// A target or server that failed: exit status 3.
pub fn target_failed(message: impl Into<String>) -> anyhow::Error {
    Failure {
        exit: Exit::TargetFailed,
        message: message.into(),
    }
    .into()
}

/// A check that failed: exit status 1.
pub fn check_failed(message: impl Into<String>) -> anyhow::Error {
    Failure {
        exit: Exit::CheckFailed,
        message: message.into(),
    }
    .into()
}

/// Prints an error (if any) as `error: ...` on stderr and picks the exit status.
#[must_use]
pub fn report(result: anyhow::Result<Exit>) -> ExitCode {
    match result {
        Ok(exit) => exit.into(),
        Err(error) => {
            if is_broken_pipe(&error) {
                return Exit::Success.into();
            }
            let exit = error
                .chain()
                .find_map(|cause| cause.downcast_ref::<Failure>())
                .map_or(Exit::CheckFailed, |failure| failure.exit);
            let _ = writeln!(std::io::stderr(), "error: {error:#}");
            exit.into()
        }
    }
}

/// A closed stdout (`corobench ... | head`) is not a failure.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
