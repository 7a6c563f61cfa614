//! Profiles: the folded on-CPU stacks of each scenario's profile trial, or
//! why it has none. One row per scenario; a resumed run replaces it.

use std::path::Path;

use corobench_model::{ProfileOutcome, ProfileRecord};
use rusqlite::{Connection, Row, named_params};

use crate::error::{StoreError, classify};
use crate::rows::decode_error;
use crate::store::Store;

impl Store {
    /// Stores (or replaces) the profile of one scenario and commits.
    ///
    /// # Errors
    /// When the run or scenario is unknown, or the database cannot be written.
    pub fn record_profile(
        &mut self,
        run_id: &str,
        profile: &ProfileRecord,
    ) -> Result<(), StoreError> {
        let inserted = insert_profile(&self.conn, run_id, profile);
        match inserted {
            Ok(_) => Ok(()),
            Err(e) if is_foreign_key(&e) => Err(self.unknown_scenario(run_id, profile)),
            Err(e) => Err(classify(e, &self.path, "storing a profile", Some(run_id))),
        }
    }

    /// The run's profiles, in plan order.
    pub(crate) fn profile_records(&self, run_id: &str) -> Result<Vec<ProfileRecord>, StoreError> {
        self.query_rows(
            "SELECT scenario_idx, started_at_unix_ms, frequency_hz, status, samples, \
             folded_stacks, reason FROM profiles WHERE run_id = ?1 ORDER BY scenario_idx",
            [run_id],
            "loading the profiles",
            ProfileRow::read,
        )?
        .into_iter()
        .map(|row| row.into_record(&self.path))
        .collect()
    }

    fn unknown_scenario(&self, run_id: &str, profile: &ProfileRecord) -> StoreError {
        match self.run_record(run_id) {
            Ok(_) => StoreError::UnknownScenario {
                path: self.path.clone(),
                run_id: run_id.to_owned(),
                scenario_index: profile.scenario_index,
            },
            Err(error) => error,
        }
    }
}

/// One row of `profiles`, as read.
struct ProfileRow {
    scenario_index: u32,
    started_at_unix_ms: i64,
    frequency_hz: u32,
    status: String,
    samples: Option<u64>,
    folded_stacks: Option<String>,
    reason: Option<String>,
}

impl ProfileRow {
    fn read(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            scenario_index: row.get(0)?,
            started_at_unix_ms: row.get(1)?,
            frequency_hz: row.get(2)?,
            status: row.get(3)?,
            samples: row.get(4)?,
            folded_stacks: row.get(5)?,
            reason: row.get(6)?,
        })
    }

    fn into_record(self, path: &Path) -> Result<ProfileRecord, StoreError> {
        let outcome = match (
            self.status.as_str(),
            self.samples,
            self.folded_stacks,
            self.reason,
        ) {
            ("captured", Some(samples), Some(folded_stacks), _) => ProfileOutcome::Captured {
                samples,
                folded_stacks,
            },
            ("skipped", _, _, Some(reason)) => ProfileOutcome::Skipped { reason },
            (status, ..) => {
                return Err(decode_error(
                    path,
                    "profile",
                    format!("status `{status}` without its data"),
                ));
            }
        };
        Ok(ProfileRecord {
            scenario_index: self.scenario_index,
            frequency_hz: self.frequency_hz,
            started_at_unix_ms: self.started_at_unix_ms,
            outcome,
        })
    }
}

/// Inserts (or replaces) the profile's row.
pub(crate) fn insert_profile(
    conn: &Connection,
    run_id: &str,
    profile: &ProfileRecord,
) -> rusqlite::Result<usize> {
    let (status, samples, folded, reason) = match &profile.outcome {
        ProfileOutcome::Captured {
            samples,
            folded_stacks,
        } => ("captured", Some(*samples), Some(folded_stacks), None),
        ProfileOutcome::Skipped { reason } => ("skipped", None, None, Some(reason)),
    };
    conn.execute(
        "INSERT OR REPLACE INTO profiles (run_id, scenario_idx, started_at_unix_ms, \
         frequency_hz, status, samples, folded_stacks, reason) VALUES (:run, :scenario, \
         :started, :hz, :status, :samples, :folded, :reason)",
        named_params! {
            ":run": run_id,
            ":scenario": profile.scenario_index,
            ":started": profile.started_at_unix_ms,
            ":hz": profile.frequency_hz,
            ":status": status,
            ":samples": samples,
            ":folded": folded,
            ":reason": reason,
        },
    )
}

fn is_foreign_key(error: &rusqlite::Error) -> bool {
    matches!(
        error,
        rusqlite::Error::SqliteFailure(e, _)
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY
    )
}
