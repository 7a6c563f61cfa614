//! Idle trials' measurements, one row per trial beside its `trials` row.

use std::collections::HashMap;

use corobench_model::{IdleMeasurement, TrialRecord};
use rusqlite::Transaction;

use crate::error::StoreError;
use crate::store::Store;

/// Stores what an idle trial measured, inside the trial's transaction.
pub(crate) fn insert_idle(
    tx: &Transaction<'_>,
    run_id: &str,
    trial: &TrialRecord,
) -> rusqlite::Result<()> {
    let Some(idle) = &trial.idle else {
        return Ok(());
    };
    tx.execute(
        "INSERT INTO idle_trials (run_id, scenario_idx, trial_idx, connections, rss_bytes, \
         settled, waited_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        rusqlite::params![
            run_id,
            trial.scenario_index,
            trial.trial_index,
            idle.connections,
            idle.rss_bytes,
            idle.settled,
            idle.waited_s,
        ],
    )?;
    Ok(())
}

impl Store {
    /// Puts each stored idle measurement of the run into its trial.
    pub(crate) fn attach_idle(
        &self,
        run_id: &str,
        trials: &mut [TrialRecord],
    ) -> Result<(), StoreError> {
        let mut measured: HashMap<(u32, u32), IdleMeasurement> = self
            .query_rows(
                "SELECT scenario_idx, trial_idx, connections, rss_bytes, settled, waited_s \
                 FROM idle_trials WHERE run_id = ?1",
                [run_id],
                "loading the idle trials",
                |row| {
                    let key = (row.get(0)?, row.get(1)?);
                    let idle = IdleMeasurement {
                        connections: row.get(2)?,
                        rss_bytes: row.get(3)?,
                        settled: row.get(4)?,
                        waited_s: row.get(5)?,
                    };
                    Ok((key, idle))
                },
            )?
            .into_iter()
            .collect();
        for trial in trials {
            trial.idle = measured.remove(&(trial.scenario_index, trial.trial_index));
        }
        Ok(())
    }
}
