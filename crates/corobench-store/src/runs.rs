//! Runs and their scenarios: creating, listing, finding and loading them.

use std::path::Path;
use std::time::Duration;

use corobench_model::{RunProcess, RunRecord, RunStatus, ScenarioRecord};
use rusqlite::{OptionalExtension as _, Row, Transaction, params};

use crate::error::{StoreError, classify, is_duplicate};
use crate::rows::{decode_error, from_json, run_status, to_json};
use crate::scenarios::insert_scenario;
use crate::store::Store;

/// One line of `corobench runs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunListing {
    pub id: String,
    pub suite: String,
    pub status: RunStatus,
    pub started_at_unix_ms: i64,
    pub finished_at_unix_ms: Option<i64>,
    pub scenarios: u32,
    /// Scenarios × trials per scenario.
    pub trials_planned: u32,
    pub trials_ok: u32,
    pub trials_failed: u32,
    /// The corobench process that measures it, recorded while it runs.
    pub process: Option<RunProcess>,
    /// Why it ended before its plan did, when an error ended it.
    pub reason: Option<String>,
}

/// How long ending a run that an error ended waits for a database another
/// process holds locked (the store's own wait is 10 s): a run left marked
/// running would be listed as died, and the reason lost.
pub const END_PATIENCE: Duration = Duration::from_secs(60);

/// How many run ids an "unknown run" error suggests.
const SUGGESTED_RUNS: u32 = 10;

/// The word that names the newest run.
pub const LATEST: &str = "latest";

impl Store {
    /// Stores a new run and its scenarios, in one transaction.
    ///
    /// # Errors
    /// When a run with this id exists, two scenarios share an index or key,
    /// or the database cannot be written.
    pub fn create_run(
        &mut self,
        run: &RunRecord,
        trials_per_scenario: u32,
        scenarios: &[ScenarioRecord],
    ) -> Result<(), StoreError> {
        let path = &self.path;
        let fail = |e| classify(e, path, "storing the run", Some(&run.id));
        let tx = self.conn.transaction().map_err(fail)?;
        insert_run(&tx, run, trials_per_scenario, path)?;
        for scenario in scenarios {
            insert_scenario(&tx, &run.id, scenario, path).map_err(|e| match e {
                StoreError::Sqlite { source, .. } => fail(source),
                other => other,
            })?;
        }
        tx.commit().map_err(fail)
    }

    /// Adds a scenario to a stored run: a capacity search adds one for each
    /// rate it tries.
    ///
    /// # Errors
    /// When the run is unknown, the scenario's index or key is taken, or the
    /// database cannot be written.
    pub fn add_scenario(
        &mut self,
        run_id: &str,
        scenario: &ScenarioRecord,
    ) -> Result<(), StoreError> {
        let path = &self.path;
        let fail = |e| classify(e, path, "storing a scenario", Some(run_id));
        let tx = self.conn.transaction().map_err(fail)?;
        insert_scenario(&tx, run_id, scenario, path).map_err(|e| match e {
            StoreError::Sqlite { source, .. } => fail(source),
            other => other,
        })?;
        tx.commit().map_err(fail)
    }

    /// Records how a run stands (and when it finished, once it has).
    ///
    /// # Errors
    /// When the run is unknown or the database cannot be written.
    pub fn set_run_status(
        &mut self,
        run_id: &str,
        status: RunStatus,
        finished_at_unix_ms: Option<i64>,
    ) -> Result<(), StoreError> {
        let changed = self
            .conn
            .execute(
                "UPDATE runs SET status = ?2, finished_at_unix_ms = ?3, status_reason = NULL \
                 WHERE id = ?1",
                params![run_id, status.as_str(), finished_at_unix_ms],
            )
            .map_err(|e| self.fail(e, "updating the run status", Some(run_id)))?;
        if changed == 0 {
            return Err(self.unknown_run(run_id));
        }
        Ok(())
    }

    /// Records how a run ended (and when it finished, once it has) and
    /// releases it from its process, with `reason`, the error that ended
    /// it, if one did; then it waits up to [`END_PATIENCE`] for a database
    /// locked by another process, as the error may have been that lock.
    ///
    /// # Errors
    /// When the run is unknown or the database cannot be written.
    pub fn end_run(
        &mut self,
        run_id: &str,
        status: RunStatus,
        finished_at_unix_ms: Option<i64>,
        reason: Option<&str>,
    ) -> Result<(), StoreError> {
        if reason.is_some() {
            let _ = self.conn.busy_timeout(END_PATIENCE);
        }
        let changed = self.conn.execute(
            "UPDATE runs SET status = ?2, finished_at_unix_ms = ?3, status_reason = ?4, \
             process_pid = NULL, process_started = NULL WHERE id = ?1",
            params![run_id, status.as_str(), finished_at_unix_ms, reason],
        );
        let _ = self.conn.busy_timeout(crate::schema::BUSY_TIMEOUT);
        let changed =
            changed.map_err(|e| self.fail(e, "recording how the run ended", Some(run_id)))?;
        if changed == 0 {
            return Err(self.unknown_run(run_id));
        }
        Ok(())
    }

    /// Records the process measuring a run (`None` once it is done with it).
    ///
    /// # Errors
    /// When the run is unknown or the database cannot be written.
    pub fn set_run_process(
        &mut self,
        run_id: &str,
        process: Option<RunProcess>,
    ) -> Result<(), StoreError> {
        let changed = self
            .conn
            .execute(
                "UPDATE runs SET process_pid = ?2, process_started = ?3 WHERE id = ?1",
                params![run_id, process.map(|p| p.pid), process.map(|p| p.started)],
            )
            .map_err(|e| self.fail(e, "recording the run's process", Some(run_id)))?;
        if changed == 0 {
            return Err(self.unknown_run(run_id));
        }
        Ok(())
    }

    /// The process recorded as measuring a run, if any.
    ///
    /// # Errors
    /// When the run is unknown or the database cannot be read.
    pub fn run_process(&self, run_id: &str) -> Result<Option<RunProcess>, StoreError> {
        let found: Option<(Option<u32>, Option<u64>)> = self
            .conn
            .query_row(
                "SELECT process_pid, process_started FROM runs WHERE id = ?1",
                params![run_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(|e| self.fail(e, "reading the run's process", Some(run_id)))?;
        let (pid, started) = found.ok_or_else(|| self.unknown_run(run_id))?;
        Ok(process(pid, started))
    }

    /// Every run, newest first, with its trial counts.
    ///
    /// # Errors
    /// When the database cannot be read.
    pub fn runs(&self) -> Result<Vec<RunListing>, StoreError> {
        let rows = self.query_rows(
            "SELECT r.id, r.suite, r.status, r.started_at_unix_ms, r.finished_at_unix_ms, \
                   (SELECT COUNT(*) FROM scenarios s WHERE s.run_id = r.id) AS scenarios, \
                   r.trials_per_scenario, \
                   (SELECT COUNT(*) FROM trials t WHERE t.run_id = r.id AND t.status = 'ok'), \
                   (SELECT COUNT(*) FROM trials t WHERE t.run_id = r.id AND t.status = 'failed'), \
                   r.process_pid, r.process_started, r.status_reason \
             FROM runs r ORDER BY r.started_at_unix_ms DESC, r.id DESC",
            [],
            "listing runs",
            |row| Ok((row.get::<_, String>(2)?, listing(row)?)),
        )?;
        rows.into_iter()
            .map(|(status, mut listing)| {
                listing.status = run_status(&status, &self.path)?;
                Ok(listing)
            })
            .collect()
    }

    /// Turns what a user typed into a run id: `latest`, a full id, or a
    /// prefix that names exactly one run.
    ///
    /// # Errors
    /// When nothing matches (listing recent runs), several runs match
    /// (listing them), or the database holds no runs at all.
    pub fn resolve_run_id(&self, id_or_prefix: &str) -> Result<String, StoreError> {
        let fail = |e| self.fail(e, "looking up the run", None);
        if id_or_prefix == LATEST {
            let newest: Option<String> = self
                .conn
                .query_row(
                    "SELECT id FROM runs ORDER BY started_at_unix_ms DESC, id DESC LIMIT 1",
                    [],
                    |row| row.get(0),
                )
                .optional()
                .map_err(fail)?;
            return newest.ok_or_else(|| StoreError::NoRuns {
                path: self.path.clone(),
            });
        }
        let candidates = if id_or_prefix.is_empty() {
            Vec::new()
        } else {
            self.ids_starting_with(id_or_prefix)?
        };
        if let Some(exact) = candidates.iter().find(|id| *id == id_or_prefix) {
            return Ok(exact.clone());
        }
        match <[String; 1]>::try_from(candidates) {
            Ok([only]) => Ok(only),
            Err(none) if none.is_empty() => Err(self.unknown_run(id_or_prefix)),
            Err(several) => Err(StoreError::AmbiguousRun {
                path: self.path.clone(),
                prefix: id_or_prefix.to_owned(),
                candidates: several,
            }),
        }
    }

    fn ids_starting_with(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        // substr, not LIKE: ids may hold `_` or `%`, and the match is case-sensitive.
        self.query_rows(
            "SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1 \
             ORDER BY started_at_unix_ms DESC, id DESC",
            [prefix],
            "looking up the run",
            |row| row.get(0),
        )
    }

    /// An "unknown run" error that suggests the most recent runs.
    pub(crate) fn unknown_run(&self, run_id: &str) -> StoreError {
        let known = self
            .query_rows(
                "SELECT id FROM runs ORDER BY started_at_unix_ms DESC, id DESC LIMIT ?1",
                [SUGGESTED_RUNS],
                "listing recent runs",
                |row| row.get(0),
            )
            .unwrap_or_default();
        StoreError::UnknownRun {
            path: self.path.clone(),
            id: run_id.to_owned(),
            known,
        }
    }

    /// The run row and its planned trials per scenario.
    pub(crate) fn run_record(&self, run_id: &str) -> Result<(RunRecord, u32), StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT id, started_at_unix_ms, finished_at_unix_ms, status, suite, spec_toml, \
                 seed, trials_per_scenario, provenance_json, claims_json, baseline, capacity_json, \
                 precision_goal_json FROM runs WHERE id = ?1",
                [run_id],
                |row| {
                    Ok((
                        (
                            row.get(0)?,
                            row.get(1)?,
                            row.get(2)?,
                            row.get::<_, String>(3)?,
                        ),
                        (row.get(4)?, row.get(5)?, row.get::<_, String>(6)?),
                        (row.get(7)?, row.get::<_, String>(8)?),
                        (
                            row.get::<_, Option<String>>(9)?,
                            row.get(10)?,
                            row.get::<_, Option<String>>(11)?,
                            row.get::<_, Option<String>>(12)?,
                        ),
                    ))
                },
            )
            .optional()
            .map_err(|e| self.fail(e, "loading the run", None))?;
        let Some((
            (id, started, finished, status),
            (suite, spec_toml, seed),
            (trials, provenance),
            (claims, baseline, capacity, goal),
        )) = row
        else {
            return Err(self.unknown_run(run_id));
        };
        let run = RunRecord {
            id,
            started_at_unix_ms: started,
            finished_at_unix_ms: finished,
            status: run_status(&status, &self.path)?,
            suite,
            spec_toml,
            seed: seed
                .parse()
                .map_err(|e| decode_error(&self.path, "run seed", e))?,
            provenance: from_json(&provenance, "provenance", &self.path)?,
            claims: claims
                .map(|json| from_json(&json, "claims", &self.path))
                .transpose()?
                .unwrap_or_default(),
            baseline,
            capacity: capacity
                .map(|json| from_json(&json, "capacity settings", &self.path))
                .transpose()?,
            precision_goal: goal
                .map(|json| from_json(&json, "precision goal", &self.path))
                .transpose()?,
        };
        Ok((run, trials))
    }
}

/// Inserts the run's row: a run id already stored is refused.
pub(crate) fn insert_run(
    tx: &Transaction<'_>,
    run: &RunRecord,
    trials_per_scenario: u32,
    path: &Path,
) -> Result<(), StoreError> {
    let provenance = to_json(&run.provenance, "provenance", path)?;
    let claims = if run.claims.is_empty() {
        None
    } else {
        Some(to_json(&run.claims, "claims", path)?)
    };
    let capacity = run
        .capacity
        .as_ref()
        .map(|c| to_json(c, "capacity settings", path))
        .transpose()?;
    let goal = run
        .precision_goal
        .as_ref()
        .map(|g| to_json(g, "precision goal", path))
        .transpose()?;
    let inserted = tx.execute(
        "INSERT INTO runs (id, started_at_unix_ms, finished_at_unix_ms, status, suite, \
         spec_toml, seed, trials_per_scenario, provenance_json, claims_json, baseline, \
         capacity_json, precision_goal_json) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            run.id,
            run.started_at_unix_ms,
            run.finished_at_unix_ms,
            run.status.as_str(),
            run.suite,
            run.spec_toml,
            run.seed.to_string(),
            trials_per_scenario,
            provenance,
            claims,
            run.baseline,
            capacity,
            goal,
        ],
    );
    match inserted {
        Err(e) if is_duplicate(&e) => Err(StoreError::RunExists {
            path: path.to_path_buf(),
            run_id: run.id.clone(),
        }),
        Err(e) => Err(classify(e, path, "storing the run", Some(&run.id))),
        Ok(_) => Ok(()),
    }
}

fn listing(row: &Row<'_>) -> rusqlite::Result<RunListing> {
    let scenarios: u32 = row.get(5)?;
    let trials_per_scenario: u32 = row.get(6)?;
    Ok(RunListing {
        id: row.get(0)?,
        suite: row.get(1)?,
        status: RunStatus::Running,
        started_at_unix_ms: row.get(3)?,
        finished_at_unix_ms: row.get(4)?,
        scenarios,
        trials_planned: scenarios.saturating_mul(trials_per_scenario),
        trials_ok: row.get(7)?,
        trials_failed: row.get(8)?,
        process: process(row.get(9)?, row.get(10)?),
        reason: row.get(11)?,
    })
}

fn process(pid: Option<u32>, started: Option<u64>) -> Option<RunProcess> {
    Some(RunProcess {
        pid: pid?,
        started: started?,
    })
}
