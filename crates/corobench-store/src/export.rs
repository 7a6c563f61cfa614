//! Reading runs out of the store to export them, or to judge many runs
//! without loading their trials.

use corobench_model::{RunRecord, RunStatus, StoredRun};

use crate::error::StoreError;
use crate::store::Store;

impl Store {
    /// A run that has ended (complete, interrupted or failed), everything
    /// included, as a run file holds it.
    ///
    /// # Errors
    /// When the run is unknown or unreadable, or still marked as running.
    pub fn run_to_export(&self, run_id: &str) -> Result<StoredRun, StoreError> {
        let run = self.load_run(run_id)?;
        if run.run.status == RunStatus::Running {
            return Err(StoreError::StillRunning {
                path: self.path.clone(),
                run_id: run_id.to_owned(),
            });
        }
        Ok(run)
    }

    /// The record of every stored run (its spec, provenance and claims,
    /// without scenarios or trials), newest first.
    ///
    /// # Errors
    /// When the database cannot be read.
    pub fn run_records(&self) -> Result<Vec<RunRecord>, StoreError> {
        self.runs()?
            .iter()
            .map(|listing| self.run_record(&listing.id).map(|(run, _)| run))
            .collect()
    }
}
