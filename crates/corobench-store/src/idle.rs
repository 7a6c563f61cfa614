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
        let fail = |e| self.fail(e, "loading the idle trials", None);
        let mut statement = self
            .conn
            .prepare(
                "SELECT scenario_idx, trial_idx, connections, rss_bytes, settled, waited_s \
                 FROM idle_trials WHERE run_id = ?1",
            )
            .map_err(fail)?;
        let rows = statement
            .query_map([run_id], |row| {
                let key: (u32, u32) = (row.get(0)?, row.get(1)?);
                let idle = IdleMeasurement {
                    connections: row.get(2)?,
                    rss_bytes: row.get(3)?,
                    settled: row.get(4)?,
                    waited_s: row.get(5)?,
                };
                Ok((key, idle))
            })
            .map_err(fail)?;
        let mut measured = HashMap::new();
        for row in rows {
            let (key, idle) = row.map_err(fail)?;
            measured.insert(key, idle);
        }
        for trial in trials {
            trial.idle = measured.remove(&(trial.scenario_index, trial.trial_index));
        }
        Ok(())
    }
}
