//! What can go wrong with the result database, said so the user knows what
//! to do with the file. Which flag or command would help is the caller's
//! to add: the store knows files and runs, not command lines.

use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

/// A store operation failed. Every variant names the database file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no result database at {}", path.display())]
    Missing { path: PathBuf },
    #[error(
        "cannot open the result database {}: {reason}; check that its directory exists and is \
         writable",
        path.display()
    )]
    CannotOpen { path: PathBuf, reason: String },
    #[error(
        "{} was written by a newer corobench (schema {found}; this one knows schema {known} at \
         most); upgrade corobench",
        path.display()
    )]
    NewerSchema {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error(
        "{} is an SQLite database of something else, not a corobench result store",
        path.display()
    )]
    Foreign { path: PathBuf },
    #[error(
        "{} is not a corobench result database or is corrupt ({reason}); move it aside",
        path.display()
    )]
    Corrupt { path: PathBuf, reason: String },
    /// The disk filled up; `run_id` is the run being written, which can be
    /// resumed once there is space.
    #[error(
        "the disk holding {} is full; free space and {}",
        path.display(),
        if run_id.is_some() { "resume the run" } else { "try again" }
    )]
    DiskFull {
        path: PathBuf,
        run_id: Option<String>,
    },
    #[error("{} is read-only; make it (and its directory) writable", path.display())]
    ReadOnly { path: PathBuf },
    #[error(
        "{} is locked by another process; wait for the other corobench to finish",
        path.display()
    )]
    Locked { path: PathBuf },
    #[error("no run `{id}` in {}; {}", path.display(), known_runs(known))]
    UnknownRun {
        path: PathBuf,
        id: String,
        /// The most recent run ids, newest first.
        known: Vec<String>,
    },
    #[error(
        "`{prefix}` matches several runs in {}: {}; give more of the id",
        path.display(),
        candidates.join(", ")
    )]
    AmbiguousRun {
        path: PathBuf,
        prefix: String,
        candidates: Vec<String>,
    },
    #[error("{} holds no runs yet", path.display())]
    NoRuns { path: PathBuf },
    #[error("run `{run_id}` is already in {}; a new run needs a new id", path.display())]
    RunExists { path: PathBuf, run_id: String },
    #[error(
        "run `{run_id}` in {} is still running (or the process measuring it died); a run can be \
         exported once it has ended: let it finish, or resume it",
        path.display()
    )]
    StillRunning { path: PathBuf, run_id: String },
    #[error(
        "run `{run_id}` is already in {} with other contents (stored: {stored}; imported: \
         {imported}); a run id names one run, so neither replaces the other: import into \
         another database",
        path.display()
    )]
    RunDiffers {
        path: PathBuf,
        run_id: String,
        /// The stored run in a few words: status and trial count.
        stored: String,
        /// The imported run in the same words.
        imported: String,
    },
    #[error(
        "run `{run_id}` in {} has no scenario {scenario_index}; a trial can only be stored for a \
         scenario created with its run",
        path.display()
    )]
    UnknownScenario {
        path: PathBuf,
        run_id: String,
        scenario_index: u32,
    },
    #[error(
        "trial {trial_index} of scenario {scenario_index} of run `{run_id}` is already stored in {}; \
         storing it again would count it twice (a resumed run skips stored trials)",
        path.display()
    )]
    TrialExists {
        path: PathBuf,
        run_id: String,
        scenario_index: u32,
        trial_index: u32,
    },
    #[error(
        "{}: the stored {what} cannot be read back ({reason}); the database was changed by hand \
         or is damaged",
        path.display()
    )]
    Decode {
        path: PathBuf,
        what: String,
        reason: String,
    },
    #[error("{}: the {what} cannot be stored ({reason})", path.display())]
    Encode {
        path: PathBuf,
        what: &'static str,
        reason: String,
    },
    #[error("{}: {doing} failed: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        doing: &'static str,
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// The same error naming `original` instead of the file it was about
    /// (a scratch copy of `original`).
    #[must_use]
    pub(crate) fn naming(mut self, original: &Path) -> Self {
        match &mut self {
            Self::Missing { path }
            | Self::CannotOpen { path, .. }
            | Self::NewerSchema { path, .. }
            | Self::Foreign { path }
            | Self::Corrupt { path, .. }
            | Self::DiskFull { path, .. }
            | Self::ReadOnly { path }
            | Self::Locked { path }
            | Self::UnknownRun { path, .. }
            | Self::AmbiguousRun { path, .. }
            | Self::NoRuns { path }
            | Self::RunExists { path, .. }
            | Self::StillRunning { path, .. }
            | Self::RunDiffers { path, .. }
            | Self::UnknownScenario { path, .. }
            | Self::TrialExists { path, .. }
            | Self::Decode { path, .. }
            | Self::Encode { path, .. }
            | Self::Sqlite { path, .. } => *path = original.to_path_buf(),
        }
        self
    }
}

fn known_runs(known: &[String]) -> String {
    if known.is_empty() {
        "the database holds no runs".to_owned()
    } else {
        format!("recent runs: {}", known.join(", "))
    }
}

/// Turns an SQLite failure into the [`StoreError`] that tells the user what to
/// do; `run_id` is the run being written, for the resume hint.
pub(crate) fn classify(
    error: rusqlite::Error,
    path: &Path,
    doing: &'static str,
    run_id: Option<&str>,
) -> StoreError {
    let path = path.to_path_buf();
    let Some(code) = error.sqlite_error_code() else {
        return StoreError::Sqlite {
            path,
            doing,
            source: error,
        };
    };
    match code {
        ErrorCode::DiskFull => StoreError::DiskFull {
            path,
            run_id: run_id.map(str::to_owned),
        },
        ErrorCode::ReadOnly => StoreError::ReadOnly { path },
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => StoreError::Locked { path },
        ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => StoreError::Corrupt {
            path,
            reason: error.to_string(),
        },
        ErrorCode::CannotOpen => StoreError::CannotOpen {
            path,
            reason: error.to_string(),
        },
        _ => StoreError::Sqlite {
            path,
            doing,
            source: error,
        },
    }
}

/// Whether `error` is a primary-key or unique-constraint violation.
pub(crate) fn is_duplicate(error: &rusqlite::Error) -> bool {
    matches!(
        error,
        rusqlite::Error::SqliteFailure(e, _)
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                || e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
    )
}

#[cfg(test)]
mod tests {
    use rusqlite::ffi;

    use super::*;

    fn failure(code: i32) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(ffi::Error::new(code), None)
    }

    fn message(code: i32, run_id: Option<&str>) -> String {
        classify(
            failure(code),
            Path::new("/data/results.db"),
            "storing",
            run_id,
        )
        .to_string()
    }

    #[test]
    fn each_failure_says_what_to_do() {
        let cases = [
            (ffi::SQLITE_READONLY, "is read-only; make it"),
            (ffi::SQLITE_BUSY, "is locked by another process"),
            (ffi::SQLITE_LOCKED, "is locked by another process"),
            (ffi::SQLITE_CORRUPT, "is corrupt"),
            (ffi::SQLITE_NOTADB, "not a corobench result database"),
            (ffi::SQLITE_CANTOPEN, "check that its directory exists"),
            (ffi::SQLITE_FULL, "free space and try again"),
            (ffi::SQLITE_IOERR, "storing failed"),
        ];
        for (code, expected) in cases {
            let text = message(code, None);
            assert!(text.contains("/data/results.db"), "{text}");
            assert!(text.contains(expected), "{code}: {text}");
        }
    }

    #[test]
    fn a_full_disk_during_a_run_keeps_the_run_to_resume() {
        let error = classify(
            failure(ffi::SQLITE_FULL),
            Path::new("/data/results.db"),
            "storing",
            Some("20261122-063301-3f9a"),
        );
        assert_eq!(
            error.to_string(),
            "the disk holding /data/results.db is full; free space and resume the run"
        );
        assert!(
            matches!(&error, StoreError::DiskFull { run_id: Some(id), .. } if id == "20261122-063301-3f9a"),
            "{error:?}"
        );
    }

    #[test]
    fn duplicates_are_told_apart_from_other_constraints() {
        let duplicate = failure(ffi::SQLITE_CONSTRAINT_PRIMARYKEY);
        let foreign_key = failure(ffi::SQLITE_CONSTRAINT_FOREIGNKEY);
        assert!(is_duplicate(&duplicate));
        assert!(is_duplicate(&failure(ffi::SQLITE_CONSTRAINT_UNIQUE)));
        assert!(!is_duplicate(&foreign_key));
    }
}
