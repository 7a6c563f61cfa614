//! How preparing and running trials can fail, as types: the runner says
//! what went wrong, and the command layer (`crate::exit`) alone decides
//! which exit status that deserves.

use std::path::PathBuf;

use corobench_target::TargetError;

/// A failure of the runner that is not a target's or the store's own error
/// (those travel as they are).
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// A workload's `body_file` that cannot be read: the spec must change.
    #[error("cannot read the body of workload {workload}: {}: {error}", path.display())]
    BodyUnreadable {
        workload: String,
        path: PathBuf,
        error: std::io::Error,
    },
    /// The plan has `/db` workloads and the private PostgreSQL cluster did
    /// not start.
    #[error("PostgreSQL did not start, and the plan has /db workloads: {0}")]
    Postgres(Box<TargetError>),
    /// A `[hosts]` host that cannot take part as the spec asks (unreachable
    /// over SSH, another corobench version): the spec or the host must change.
    #[error("{0}")]
    Host(String),
    /// A user's server could not be started or reached to check its answers.
    #[error("{target} could not be checked before the first trial: {why}")]
    NotChecked { target: String, why: String },
    /// A user's server answered a workload's request in a way its
    /// expectations refuse: it would be measured doing something else.
    #[error(
        "{target} does not answer workload {workload} ({request}) as expected, so it is not \
         measured: {problem}"
    )]
    Expectation {
        target: String,
        workload: String,
        request: String,
        problem: String,
    },
    /// This executable could not be found to copy it to a host.
    #[error("cannot find corobench's own executable: {0}")]
    OwnExecutable(std::io::Error),
}
