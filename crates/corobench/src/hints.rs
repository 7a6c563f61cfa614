//! The flags and commands that fix an error. Library errors say what went
//! wrong in their own words, with the facts; which flag or command would
//! help is the command line's to say, here, once for each kind of error.

use std::path::Path;

use corobench_analyze::AnalyzeError;
use corobench_analyze::gate::{self, GateSyntaxError};
use corobench_engine::EngineError;
use corobench_report::ReportError;
use corobench_store::StoreError;
use corobench_target::TargetError;

use crate::commands::shared::DbArg;
use crate::exit;

/// What to add after `error`'s message: the flag or command that helps,
/// from the first cause in its chain that has one; empty when its own
/// words say all.
#[must_use]
pub fn hint(error: &anyhow::Error) -> String {
    error
        .chain()
        .find_map(|cause| {
            if let Some(error) = cause.downcast_ref::<EngineError>() {
                return engine(error);
            }
            if let Some(error) = cause.downcast_ref::<StoreError>() {
                return store(error);
            }
            if let Some(error) = cause.downcast_ref::<TargetError>() {
                return target(error);
            }
            cause.downcast_ref::<ReportError>().and_then(report)
        })
        .unwrap_or_default()
}

fn engine(error: &EngineError) -> Option<String> {
    match error {
        EngineError::Store { source, .. } => store(source),
        EngineError::Target(source) | EngineError::Preparing { source, .. } => target(source),
        _ => None,
    }
}

/// Another database (`--db`), or the command that makes or resumes a run.
fn store(error: &StoreError) -> Option<String> {
    Some(match error {
        StoreError::Missing { .. } => {
            ": run `corobench run` first, or pass --db PATH to read another one".to_owned()
        }
        StoreError::CannotOpen { .. } | StoreError::ReadOnly { .. } | StoreError::Locked { .. } => {
            ", or pass --db PATH".to_owned()
        }
        StoreError::Foreign { .. } => "; pass --db PATH to use another file".to_owned(),
        StoreError::Corrupt { .. } => " or pass --db PATH".to_owned(),
        StoreError::DiskFull {
            path,
            run_id: Some(id),
        } => format!(" with `{}`", resume_command(id, path)),
        StoreError::NoRuns { .. } => "; `corobench run` makes one".to_owned(),
        _ => return None,
    })
}

/// The command that finishes run `id` stored in `db`, naming the database
/// unless it is the default one (run as printed, it must not start a new
/// `./corobench.db`).
#[must_use]
pub fn resume_command(id: &str, db: &Path) -> String {
    let db = DbArg {
        db: db.to_path_buf(),
    };
    format!("corobench run --resume {id}{}", db.as_flag())
}

fn target(error: &TargetError) -> Option<String> {
    match error {
        TargetError::TargetsDirNotFound { .. } => Some(" or pass --targets-dir DIR".to_owned()),
        _ => None,
    }
}

fn report(error: &ReportError) -> Option<String> {
    match error {
        ReportError::UnsupportedForClaims(_) => Some(" (--format)".to_owned()),
        _ => None,
    }
}

/// A `--fail-on` that is no list of rules, with an example of one.
#[must_use]
pub fn fail_on(error: &GateSyntaxError) -> anyhow::Error {
    exit::usage(format!(
        "--fail-on {error}\nexample: --fail-on \"{}\"",
        gate::EXAMPLE
    ))
}

/// A run that cannot be analysed as the flags ask.
#[must_use]
pub fn analysis(error: AnalyzeError) -> anyhow::Error {
    match &error {
        AnalyzeError::UnknownBaseline { name, .. } => {
            exit::usage(format!("--baseline {name}: {error}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn told(error: impl Into<anyhow::Error>) -> String {
        let error = error.into();
        format!("{error}{}", hint(&error))
    }

    #[test]
    fn store_errors_name_the_flag_or_command_that_helps() {
        let path = PathBuf::from("/data/results.db");
        assert_eq!(
            told(StoreError::Missing { path: path.clone() }),
            "no result database at /data/results.db: run `corobench run` first, or pass --db \
             PATH to read another one"
        );
        assert_eq!(
            told(StoreError::Locked { path: path.clone() }),
            "/data/results.db is locked by another process; wait for the other corobench to \
             finish, or pass --db PATH"
        );
        assert!(
            told(StoreError::NoRuns { path: path.clone() })
                .ends_with("; `corobench run` makes one")
        );
        let full = StoreError::DiskFull {
            path: path.clone(),
            run_id: Some("20261122-063301-3f9a".to_owned()),
        };
        assert_eq!(
            told(full),
            "the disk holding /data/results.db is full; free space and resume the run with \
             `corobench run --resume 20261122-063301-3f9a --db /data/results.db`"
        );
        // Inside the engine's error, the same advice.
        let stored = EngineError::Store {
            what: "storing a trial",
            source: Box::new(StoreError::ReadOnly { path }),
        };
        assert!(told(stored).ends_with("writable, or pass --db PATH"));
    }

    #[test]
    fn the_default_database_is_not_named_in_the_resume_command() {
        assert_eq!(
            resume_command("r1", Path::new(crate::commands::shared::DEFAULT_DB)),
            "corobench run --resume r1"
        );
    }

    #[test]
    fn a_missing_targets_folder_names_the_flag() {
        let error = TargetError::TargetsDirNotFound {
            tried: vec!["/nonexistent/targets (asked for), which is not a directory".to_owned()],
        };
        assert!(told(error).ends_with("; set COROBENCH_TARGETS or pass --targets-dir DIR"),);
    }

    #[test]
    fn gate_rules_and_baselines_are_told_as_their_flags() {
        let syntax = gate::parse_rules("rps:-5").unwrap_err();
        let shown = fail_on(&syntax).to_string();
        assert!(
            shown.starts_with("--fail-on \"rps:-5\": at column 7"),
            "{shown}"
        );
        assert!(
            shown.ends_with("example: --fail-on \"rps:-5%,p99:+10%\""),
            "{shown}"
        );
        let baseline = analysis(AnalyzeError::UnknownBaseline {
            name: "nginx".to_owned(),
            run_id: "r1".to_owned(),
            targets: vec!["base".to_owned(), "ants".to_owned()],
        });
        assert_eq!(
            baseline.to_string(),
            "--baseline nginx: run r1 has no target nginx to compare with; use one of: base, ants"
        );
        assert_eq!(exit::status_of(&baseline), exit::Exit::Usage);
    }
}
