//! Importing runs: from run files or from another machine's database, all
//! in one transaction, so an import either stores every new run or none.
//!
//! A run id names one run. A run already stored with the same contents is
//! left as it is (importing twice stores it once); one stored with other
//! contents under the same id is refused, never overwritten.

use std::fs;
use std::path::Path;

use corobench_model::{RunStatus, StoredRun, TrialStatus};

use crate::error::{StoreError, classify};
use crate::profiles::insert_profile;
use crate::run_file::canonical;
use crate::runs::insert_run;
use crate::scenarios::insert_scenario;
use crate::store::Store;
use crate::trials::insert_trial_rows;

/// What importing did with one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportOutcome {
    /// Stored now.
    Added,
    /// Already stored, with the same contents: left as it was.
    AlreadyStored,
}

/// One run of an import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedRun {
    pub run_id: String,
    pub suite: String,
    pub outcome: ImportOutcome,
}

/// The runs of another results database.
#[derive(Debug)]
pub struct DatabaseRuns {
    /// Every run that has ended, oldest first.
    pub ended: Vec<StoredRun>,
    /// Runs still marked as running, which are not imported.
    pub running: Vec<String>,
}

impl Store {
    /// Stores `runs` that are not stored yet, in one transaction; says
    /// what it did with each, in their order.
    ///
    /// # Errors
    /// When a run is still running, a run id is already stored (or given
    /// twice) with other contents, or the database cannot be written
    /// (read-only, locked, full). Nothing is stored then.
    pub fn import_runs(&mut self, runs: &[StoredRun]) -> Result<Vec<ImportedRun>, StoreError> {
        let mut outcomes: Vec<ImportedRun> = Vec::new();
        let mut fresh: Vec<(&StoredRun, Vec<u8>)> = Vec::new();
        for run in runs {
            let id = &run.run.id;
            if run.run.status == RunStatus::Running {
                return Err(StoreError::StillRunning {
                    path: self.path.clone(),
                    run_id: id.clone(),
                });
            }
            let form = self.canonical(run)?;
            let outcome = if let Some((earlier, earlier_form)) =
                fresh.iter().find(|(r, _)| r.run.id == *id)
            {
                // Given twice in this import: stored once.
                self.same_run(earlier, earlier_form, run, &form)?;
                ImportOutcome::AlreadyStored
            } else if let Some((stored, stored_form)) = self.stored_form(id)? {
                self.same_run(&stored, &stored_form, run, &form)?;
                ImportOutcome::AlreadyStored
            } else {
                fresh.push((run, form));
                ImportOutcome::Added
            };
            outcomes.push(ImportedRun {
                run_id: id.clone(),
                suite: run.run.suite.clone(),
                outcome,
            });
        }
        self.insert_runs(fresh.iter().map(|(run, _)| *run))?;
        Ok(outcomes)
    }

    fn insert_runs<'a>(
        &mut self,
        runs: impl Iterator<Item = &'a StoredRun>,
    ) -> Result<(), StoreError> {
        let path = &self.path;
        let fail = |e| classify(e, path, "importing runs", None);
        let tx = self.conn.transaction().map_err(fail)?;
        for stored in runs {
            let id = &stored.run.id;
            insert_run(&tx, &stored.run, stored.trials_per_scenario, path)?;
            for scenario in &stored.scenarios {
                insert_scenario(&tx, id, scenario, path).map_err(|e| match e {
                    StoreError::Sqlite { source, .. } => fail(source),
                    other => other,
                })?;
            }
            for trial in &stored.trials {
                insert_trial_rows(&tx, id, trial, path)?;
            }
            for profile in &stored.profiles {
                insert_profile(&tx, id, profile).map_err(fail)?;
            }
        }
        tx.commit().map_err(fail)
    }

    /// The stored run of this id with its canonical form, if there is one.
    fn stored_form(&self, run_id: &str) -> Result<Option<(StoredRun, Vec<u8>)>, StoreError> {
        if !self.runs()?.iter().any(|listing| listing.id == run_id) {
            return Ok(None);
        }
        let stored = self.load_run(run_id)?;
        let form = self.canonical(&stored)?;
        Ok(Some((stored, form)))
    }

    fn canonical(&self, run: &StoredRun) -> Result<Vec<u8>, StoreError> {
        canonical(run).map_err(|e| StoreError::Encode {
            path: self.path.clone(),
            what: "run",
            reason: e.to_string(),
        })
    }

    /// Two runs under one id must be one run.
    fn same_run(
        &self,
        stored: &StoredRun,
        stored_form: &[u8],
        imported: &StoredRun,
        imported_form: &[u8],
    ) -> Result<(), StoreError> {
        if stored_form == imported_form {
            return Ok(());
        }
        Err(StoreError::RunDiffers {
            path: self.path.clone(),
            run_id: imported.run.id.clone(),
            stored: in_few_words(stored),
            imported: in_few_words(imported),
        })
    }
}

/// `complete, 36 trials (2 failed), started at 1764243020000`: enough to
/// tell two runs of one id apart.
fn in_few_words(run: &StoredRun) -> String {
    let failed = run
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Failed)
        .count();
    format!(
        "{}, {} trials ({failed} failed), suite {}, started at unix ms {}",
        run.run.status,
        run.trials.len(),
        run.run.suite,
        run.run.started_at_unix_ms
    )
}

/// Every run of the results database at `path`, read from a copy in a
/// scratch folder: the file itself is never written to (not even to
/// migrate an older schema), so a database in a read-only folder imports
/// too. Copy a database no run is writing to.
///
/// # Errors
/// When the file cannot be copied, is not a corobench database, or comes
/// from a newer corobench.
pub fn runs_of_database(path: &Path) -> Result<DatabaseRuns, StoreError> {
    let cannot_copy = |e: std::io::Error| StoreError::CannotOpen {
        path: path.to_path_buf(),
        reason: format!("cannot copy it to read it: {e}"),
    };
    let scratch = tempfile::tempdir().map_err(cannot_copy)?;
    let copy = scratch.path().join("import.db");
    fs::copy(path, &copy).map_err(cannot_copy)?;
    // Committed trials not yet checkpointed into the main file live in its
    // write-ahead log.
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if Path::new(&wal).is_file() {
        fs::copy(&wal, scratch.path().join("import.db-wal")).map_err(cannot_copy)?;
    }
    let store = Store::open_existing(&copy).map_err(|e| e.naming(path))?;
    let mut runs = DatabaseRuns {
        ended: Vec::new(),
        running: Vec::new(),
    };
    for listing in store.runs().map_err(|e| e.naming(path))?.into_iter().rev() {
        if listing.status == RunStatus::Running {
            runs.running.push(listing.id);
        } else {
            let run = store.load_run(&listing.id).map_err(|e| e.naming(path))?;
            runs.ended.push(run);
        }
    }
    Ok(runs)
}
