//! How preparing and running trials can fail, as types: the engine says
//! what went wrong in its own words, and the command that drives it alone
//! decides which exit status that deserves and which flag to name.

use std::path::PathBuf;

use corobench_spec::SpecError;
use corobench_store::StoreError;
use corobench_target::TargetError;

/// A failure of the engine. A variant that wraps another crate's error
/// keeps it as its source, so whoever reads the chain finds it.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
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
    /// The run's certificates, which its TLS scenarios need, could not be made.
    #[error("cannot make the run's certificates, and the plan has TLS scenarios: {0}")]
    Certificates(Box<TargetError>),
    /// A `[hosts]` host that cannot take part as the spec asks (unreachable
    /// over SSH, another corobench version): the spec or the host must change.
    #[error("{0}")]
    Host(String),
    /// A host corobench made itself (a Kubernetes pod) that cannot be
    /// reached or used: the environment failed, the spec is not at fault.
    #[error("{0}")]
    MadeHost(String),
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
    /// The temporary folder (`TMPDIR`) does not exist: creating it would
    /// scatter folders where nobody looks.
    #[error(
        "the temporary folder {} does not exist; create it, or point TMPDIR at a folder that does",
        .0.display()
    )]
    NoTempDir(PathBuf),
    /// A folder of the engine's own could not be made.
    #[error("creating {}: {source}", path.display())]
    Folder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A step of preparation failed on a target-layer error.
    #[error("{what}: {source}")]
    Preparing {
        what: &'static str,
        #[source]
        source: Box<TargetError>,
    },
    /// A targets folder holds no target.
    #[error("no targets in {}: each target is a folder with a target.toml", dir.display())]
    NoTargets { dir: PathBuf },
    /// A target name that no manifest has.
    #[error("no target named {name:?} in {}; targets there: {}", dir.display(), known.join(", "))]
    UnknownTarget {
        name: String,
        dir: PathBuf,
        known: Vec<String>,
    },
    /// A server a spec defines itself where it cannot run, or named like a
    /// target of the folder.
    #[error("[servers.{name}]: {why}")]
    SpecServer { name: String, why: String },
    /// The store refused a record of the run, or could not read one back.
    #[error("{what}: {source}")]
    Store {
        what: &'static str,
        #[source]
        source: Box<StoreError>,
    },
    #[error("{0}")]
    Spec(#[source] Box<SpecError>),
    #[error("{0}")]
    Target(#[source] Box<TargetError>),
}

impl From<SpecError> for EngineError {
    fn from(error: SpecError) -> Self {
        Self::Spec(Box::new(error))
    }
}

impl From<TargetError> for EngineError {
    fn from(error: TargetError) -> Self {
        Self::Target(Box::new(error))
    }
}
