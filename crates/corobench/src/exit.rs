//! Exit codes, and the errors that choose them.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | a check failed (a verify rule, a run where nothing succeeded) or an unexpected error |
//! | 2 | usage or spec error: a bad flag, value or spec file |
//! | 3 | a target or server failed: it did not build, start, become healthy, or accept connections |
//! | 4 | a target named on the command line could not be checked (verify skipped it) |
//! | 130 | interrupted by Ctrl-C or SIGTERM; completed work was kept |

use std::fmt;
use std::io::Write as _;
use std::process::ExitCode;

use corobench_analyze::AnalyzeError;
use corobench_analyze::gate::GateSyntaxError;
use corobench_engine::EngineError;
use corobench_engine::k8s::KubectlError;
use corobench_engine::serve::ServeError;
use corobench_load::LoadError;
use corobench_load::MergeError;
use corobench_spec::SpecError;
use corobench_store::{RunFileError, StoreError};
use corobench_target::TargetError;

/// The documented exit statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    CheckFailed = 1,
    Usage = 2,
    TargetFailed = 3,
    NotChecked = 4,
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

/// Prints an error (if any) as `error: ...` on stderr, with the hint
/// `hint` gives it (the flag to change, from the command layer), and picks
/// the exit status.
#[must_use]
pub fn report(result: anyhow::Result<Exit>, hint: impl Fn(&anyhow::Error) -> String) -> ExitCode {
    match result {
        Ok(exit) => exit.into(),
        Err(error) => {
            if is_broken_pipe(&error) {
                return Exit::Success.into();
            }
            let hint = hint(&error);
            let _ = writeln!(std::io::stderr(), "error: {}{hint}", chain_text(&error));
            status_of(&error).into()
        }
    }
}

/// The one exit policy: the status an error ends a command with, decided
/// here alone from the first cause in its chain that has a say. Library
/// crates and the runner return typed errors; the command layer adds a
/// [`Failure`] only where it knows better (its own checks and messages).
#[must_use]
pub fn status_of(error: &anyhow::Error) -> Exit {
    error
        .chain()
        .find_map(cause_status)
        .unwrap_or(Exit::CheckFailed)
}

fn cause_status(cause: &(dyn std::error::Error + 'static)) -> Option<Exit> {
    if let Some(failure) = cause.downcast_ref::<Failure>() {
        return Some(failure.exit);
    }
    if let Some(error) = cause.downcast_ref::<StoreError>() {
        return Some(store_status(error));
    }
    if let Some(error) = cause.downcast_ref::<TargetError>() {
        return Some(target_status(error));
    }
    if let Some(error) = cause.downcast_ref::<LoadError>() {
        return Some(load_status(error));
    }
    if let Some(error) = cause.downcast_ref::<EngineError>() {
        return engine_status(error);
    }
    if let Some(error) = cause.downcast_ref::<ServeError>() {
        return Some(serve_status(error));
    }
    if let Some(error) = cause.downcast_ref::<KubectlError>() {
        return Some(kubectl_status(error));
    }
    let input = cause.is::<SpecError>()
        || cause.is::<RunFileError>()
        || cause.is::<AnalyzeError>()
        || cause.is::<GateSyntaxError>()
        || cause.is::<MergeError>();
    input.then_some(Exit::Usage)
}

/// Store errors the user fixes with other arguments (another `--db`, run
/// id or file) are usage errors; a full disk, a locked database or a
/// failing device is not.
fn store_status(error: &StoreError) -> Exit {
    match error {
        StoreError::Missing { .. }
        | StoreError::CannotOpen { .. }
        | StoreError::NewerSchema { .. }
        | StoreError::Foreign { .. }
        | StoreError::Corrupt { .. }
        | StoreError::ReadOnly { .. }
        | StoreError::UnknownRun { .. }
        | StoreError::AmbiguousRun { .. }
        | StoreError::NoRuns { .. }
        | StoreError::StillRunning { .. }
        | StoreError::RunDiffers { .. } => Exit::Usage,
        _ => Exit::CheckFailed,
    }
}

/// A bad manifest, parameter, CPU list or setting is the user's to fix; a
/// target that does not build, start or answer failed; a failing system
/// call (CPU affinity, a file) is an unexpected error.
fn target_status(error: &TargetError) -> Exit {
    match error {
        TargetError::Manifest { .. }
        | TargetError::Manifests { .. }
        | TargetError::TargetsDirNotFound { .. }
        | TargetError::Parameter { .. }
        | TargetError::CpuSet { .. }
        | TargetError::Config { .. } => Exit::Usage,
        TargetError::Build { .. }
        | TargetError::Spawn { .. }
        | TargetError::Exited { .. }
        | TargetError::Unhealthy { .. }
        | TargetError::ListensElsewhere { .. }
        | TargetError::PortInUse { .. }
        | TargetError::NotRunning { .. }
        | TargetError::Postgres { .. } => Exit::TargetFailed,
        _ => Exit::CheckFailed,
    }
}

/// A load that cannot be configured (or exceeds the file limit, or asks
/// for TLS that cannot be had) is a usage error; a server that refuses
/// connections or fails the TLS handshake failed.
fn load_status(error: &LoadError) -> Exit {
    match error {
        LoadError::Config { .. } | LoadError::FdLimit { .. } => Exit::Usage,
        LoadError::Tls(tls) if tls.is_setting() => Exit::Usage,
        LoadError::Connect { .. } | LoadError::Tls(_) => Exit::TargetFailed,
        _ => Exit::CheckFailed,
    }
}

/// The engine's own failures, and the errors of other crates it carries.
fn engine_status(error: &EngineError) -> Option<Exit> {
    match error {
        EngineError::BodyUnreadable { .. }
        | EngineError::Host(_)
        | EngineError::NoTempDir(_)
        | EngineError::NoTargets { .. }
        | EngineError::UnknownTarget { .. }
        | EngineError::SpecServer { .. } => Some(Exit::Usage),
        EngineError::Postgres(_) | EngineError::NotChecked { .. } => Some(Exit::TargetFailed),
        EngineError::OwnExecutable(_)
        | EngineError::MadeHost(_)
        | EngineError::Expectation { .. }
        | EngineError::Certificates(_)
        | EngineError::Folder { .. } => Some(Exit::CheckFailed),
        EngineError::Preparing { source, .. } | EngineError::Target(source) => {
            Some(target_status(source))
        }
        EngineError::Spec(_) => Some(Exit::Usage),
        EngineError::Store { source, .. } => Some(store_status(source)),
    }
}

/// A program target asked to be served is a usage error; a target that
/// breaks the contract failed a check; any other that cannot be served failed.
fn serve_status(error: &ServeError) -> Exit {
    match error {
        ServeError::Program { .. } => Exit::Usage,
        ServeError::BreaksContract { .. } => Exit::CheckFailed,
        _ => Exit::TargetFailed,
    }
}

/// No kubectl is a usage error, an unreachable cluster a target that
/// failed, a Ctrl-C an interruption; any other failing call is unexpected.
fn kubectl_status(error: &KubectlError) -> Exit {
    match error {
        KubectlError::NotInstalled { .. } => Exit::Usage,
        KubectlError::Unreachable { .. } => Exit::TargetFailed,
        KubectlError::Interrupted { .. } => Exit::Interrupted,
        _ => Exit::CheckFailed,
    }
}

/// The error with its causes, `outer: inner`, leaving out a cause whose
/// text the message before it already ends with (errors that print their
/// source and also return it).
pub(crate) fn chain_text(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let shown = cause.to_string();
        if text.ends_with(&shown) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&shown);
    }
    text
}

/// A closed stdout (`corobench ... | head`) is not a failure.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    type Example = (&'static str, anyhow::Error);

    fn path() -> PathBuf {
        PathBuf::from("runs.db")
    }

    fn os() -> std::io::Error {
        std::io::Error::from_raw_os_error(libc::EPERM)
    }

    fn unexpected() -> Vec<Example> {
        let setaffinity = TargetError::Os {
            call: "sched_setaffinity",
            source: os(),
        };
        vec![
            ("a check", check_failed("a verify rule failed")),
            (
                "a full disk",
                StoreError::DiskFull {
                    path: path(),
                    run_id: None,
                }
                .into(),
            ),
            (
                "a locked database",
                StoreError::Locked { path: path() }.into(),
            ),
            ("CPU affinity refused", setaffinity.into()),
            (
                "a pod kubectl exec cannot reach",
                EngineError::MadeHost("kubectl exec failed".into()).into(),
            ),
            ("an unknown error", anyhow::anyhow!("something else")),
            (
                "a trial the store refused",
                EngineError::Store {
                    what: "storing a trial",
                    source: Box::new(StoreError::DiskFull {
                        path: path(),
                        run_id: None,
                    }),
                }
                .into(),
            ),
        ]
    }

    fn input() -> Vec<Example> {
        let cpus = TargetError::CpuSet {
            spec: "9".into(),
            message: "no CPU 9".into(),
        };
        let body = EngineError::BodyUnreadable {
            workload: "w".into(),
            path: path(),
            error: os(),
        };
        let rule = corobench_analyze::gate::parse_rules("rps").unwrap_err();
        vec![
            ("a bad flag", usage("--trials 0")),
            (
                "a missing database",
                StoreError::Missing { path: path() }.into(),
            ),
            ("no runs", StoreError::NoRuns { path: path() }.into()),
            ("a bad CPU list", cpus.into()),
            ("a bad load setting", LoadError::config(&[], "bad").into()),
            ("an unreadable body", body.into()),
            ("a gate rule", rule.into()),
            (
                "no kubectl",
                KubectlError::NotInstalled {
                    error: std::io::Error::from(std::io::ErrorKind::NotFound),
                }
                .into(),
            ),
            (
                "an unknown target",
                EngineError::UnknownTarget {
                    name: "nope".into(),
                    dir: path(),
                    known: vec!["web".into()],
                }
                .into(),
            ),
            (
                "a missing targets folder",
                EngineError::from(TargetError::TargetsDirNotFound { tried: Vec::new() }).into(),
            ),
            (
                "a bad CPU list while preparing",
                EngineError::Preparing {
                    what: "pinning",
                    source: Box::new(TargetError::CpuSet {
                        spec: "9".into(),
                        message: "no CPU 9".into(),
                    }),
                }
                .into(),
            ),
        ]
    }

    fn target() -> Vec<Example> {
        let port = TargetError::PortInUse {
            target: "t".into(),
            port: 1,
            retried: false,
        };
        let postgres = EngineError::Postgres(Box::new(TargetError::Postgres {
            message: "no initdb".into(),
        }));
        vec![
            ("a target that failed", target_failed("did not start")),
            ("a port in use", port.into()),
            ("PostgreSQL", postgres.into()),
            (
                "no cluster reachable",
                KubectlError::Unreachable {
                    context: "kind".into(),
                    said: "connection refused".into(),
                }
                .into(),
            ),
        ]
    }

    /// One error of each kind the policy knows, with the status the README's
    /// table gives it.
    fn examples() -> Vec<(&'static str, anyhow::Error, Exit)> {
        let with = |exit: Exit| move |(what, error): Example| (what, error, exit);
        unexpected()
            .into_iter()
            .map(with(Exit::CheckFailed))
            .chain(input().into_iter().map(with(Exit::Usage)))
            .chain(target().into_iter().map(with(Exit::TargetFailed)))
            .collect()
    }

    #[test]
    fn each_kind_of_error_ends_with_its_status_even_under_context() {
        for (what, error, expected) in examples() {
            assert_eq!(status_of(&error), expected, "{what}");
            let wrapped = error.context("while doing something");
            assert_eq!(status_of(&wrapped), expected, "{what}, with context");
        }
    }

    /// The README's exit table lists exactly the statuses commands end
    /// with, and every failing status is reached by some kind of error.
    #[test]
    fn the_readme_table_and_the_policy_agree() {
        let readme = include_str!("../../../README.md");
        let table = readme
            .split("Every command follows one table:")
            .nth(1)
            .expect("the README's exit table");
        let codes: Vec<u8> = table
            .lines()
            .skip_while(|line| !line.starts_with('|'))
            .take_while(|line| line.starts_with('|'))
            .filter_map(|line| line.split('|').nth(1)?.trim().parse().ok())
            .collect();
        let all = [
            Exit::Success,
            Exit::CheckFailed,
            Exit::Usage,
            Exit::TargetFailed,
            Exit::NotChecked,
            Exit::Interrupted,
        ];
        assert_eq!(codes, all.map(|exit| exit as u8));
        let reached: Vec<Exit> = examples().into_iter().map(|(_, _, exit)| exit).collect();
        for exit in [Exit::CheckFailed, Exit::Usage, Exit::TargetFailed] {
            assert!(reached.contains(&exit), "{exit:?}");
        }
    }

    #[test]
    fn a_cause_already_in_its_message_is_printed_once() {
        let error: anyhow::Error = TargetError::Os {
            call: "sched_setaffinity",
            source: std::io::Error::from_raw_os_error(libc::EPERM),
        }
        .into();
        let text = chain_text(&error.context("pinning the server"));
        assert_eq!(
            text,
            "pinning the server: sched_setaffinity failed: Operation not permitted (os error 1)"
        );
    }
}
