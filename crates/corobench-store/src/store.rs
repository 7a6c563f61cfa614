//! The result store: one SQLite file holding every run, its scenarios and trials.

use std::fs;
use std::path::{Path, PathBuf};

use corobench_model::StoredRun;
use rusqlite::{Connection, Params, Row};

use crate::error::{StoreError, classify};
use crate::schema;

/// An open result database.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
}

impl Store {
    /// Opens the database at `path`, creating the file when missing (in a
    /// folder that must exist), and migrates it to the current schema.
    ///
    /// # Errors
    /// When `path` is neither a regular file nor a new file in an existing
    /// folder, when the file cannot be created or opened, is not a
    /// corobench database, or was written by a newer corobench.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        check_new_or_regular(path)?;
        Self::connect(path, true)
    }

    /// Opens an existing database, for commands that only read results.
    ///
    /// # Errors
    /// When no file exists at `path`, and as [`Store::open`].
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        if !path.is_file() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        Self::connect(path, false)
    }

    fn connect(path: &Path, create: bool) -> Result<Self, StoreError> {
        Ok(Self {
            conn: schema::open(path, create)?,
            path: path.to_path_buf(),
        })
    }

    /// The database file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open file (the current one once opened).
    ///
    /// # Errors
    /// When the database cannot be read.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(|e| self.fail(e, "reading the schema version", None))
    }

    /// Everything stored about one run, histograms included.
    ///
    /// # Errors
    /// When the run is unknown or its rows cannot be decoded.
    pub fn load_run(&self, run_id: &str) -> Result<StoredRun, StoreError> {
        let (run, trials_per_scenario) = self.run_record(run_id)?;
        Ok(StoredRun {
            run,
            trials_per_scenario,
            scenarios: self.scenario_records(run_id)?,
            trials: self.trial_records(run_id)?,
            profiles: self.profile_records(run_id)?,
        })
    }

    /// Every row `sql` selects with `params`, each read by `read`;
    /// `doing` says what failed in an error.
    pub(crate) fn query_rows<T>(
        &self,
        sql: &str,
        params: impl Params,
        doing: &'static str,
        read: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let fail = |e| self.fail(e, doing, None);
        let mut statement = self.conn.prepare(sql).map_err(fail)?;
        let rows = statement.query_map(params, read).map_err(fail)?;
        rows.collect::<rusqlite::Result<Vec<T>>>().map_err(fail)
    }

    pub(crate) fn fail(
        &self,
        error: rusqlite::Error,
        doing: &'static str,
        run_id: Option<&str>,
    ) -> StoreError {
        classify(error, &self.path, doing, run_id)
    }
}

/// A database is a regular file, or a new one in a folder that exists:
/// SQLite would otherwise write its journal beside a device (`/dev/null`
/// gets a `/dev/null-journal`), and a mistyped folder would be created
/// where nobody looks.
fn check_new_or_regular(path: &Path) -> Result<(), StoreError> {
    let refuse = |reason: String| StoreError::CannotOpen {
        path: path.to_path_buf(),
        reason,
    };
    match fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(_) => Err(refuse(
            "it is not a regular file (a folder, a device or a pipe); give the path of a \
             database file, or of a new one in an existing folder"
                .to_owned(),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let folder = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if folder.is_dir() {
                return Ok(());
            }
            Err(refuse(format!(
                "its folder {} does not exist; create it first, or give a path in an existing \
                 folder",
                folder.display()
            )))
        }
        Err(e) => Err(refuse(e.to_string())),
    }
}
