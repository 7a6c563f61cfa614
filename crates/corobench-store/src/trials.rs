//! Trials: stored one transaction each as they end, so a crash of corobench
//! loses at most the trial in flight, and `run --resume` knows what is done.

use std::path::Path;

use corobench_model::{LoadReport, ResourceSummary, TaskCounts, TrialRecord};
use rusqlite::{OptionalExtension as _, Row, Transaction, named_params};

use crate::error::{StoreError, classify, is_duplicate};
use crate::rows::{decode_error, from_json, join_load, split_load, to_json, trial_status};
use crate::store::Store;

impl Store {
    /// Stores one trial and commits before returning.
    ///
    /// # Errors
    /// When this (scenario, trial) of the run is already stored (a resumed
    /// run must never count a trial twice), the run or scenario is unknown,
    /// or the database cannot be written (a full disk says how to resume).
    pub fn record_trial(&mut self, run_id: &str, trial: &TrialRecord) -> Result<(), StoreError> {
        let path = &self.path;
        let fail = |e| classify(e, path, "storing the trial", Some(run_id));
        let tx = self.conn.transaction().map_err(fail)?;
        if !scenario_exists(&tx, run_id, trial.scenario_index).map_err(fail)? {
            drop(tx);
            return Err(self.missing_scenario(run_id, trial.scenario_index));
        }
        insert_trial_rows(&tx, run_id, trial, path)?;
        tx.commit().map_err(fail)
    }

    /// `(scenario_index, trial_index)` of every stored trial of the run, in
    /// that order: what `run --resume` skips.
    ///
    /// # Errors
    /// When the run is unknown or the database cannot be read.
    pub fn completed_trials(&self, run_id: &str) -> Result<Vec<(u32, u32)>, StoreError> {
        self.run_record(run_id)?;
        self.query_rows(
            "SELECT scenario_idx, trial_idx FROM trials WHERE run_id = ?1 \
             ORDER BY scenario_idx, trial_idx",
            [run_id],
            "listing stored trials",
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
    }

    /// The run's trials in the order they ran.
    pub(crate) fn trial_records(&self, run_id: &str) -> Result<Vec<TrialRecord>, StoreError> {
        let rows = self.query_rows(
            "SELECT scenario_idx, trial_idx, sequence, status, failure, started_at_unix_ms, \
                 load_json, latency_hdr, latency_uncorrected_hdr, connect_latency_hdr, \
                 timeline_json, server_samples, server_cpu_pct_mean, server_cpu_user_pct_mean, \
                 server_cpu_system_pct_mean, server_rss_mean_bytes, server_rss_peak_bytes, \
                 server_threads_peak, server_processes_peak, server_ctx_voluntary, \
                 server_ctx_involuntary, tasks_before, tasks_peak, tasks_after, \
                 resource_series_json, flags_json, program_json, counters_json, probe_json, \
             pool_json FROM trials WHERE run_id = ?1 ORDER BY sequence, scenario_idx, trial_idx",
            [run_id],
            "loading the trials",
            TrialRow::read,
        )?;
        let mut trials = rows
            .into_iter()
            .map(|row| row.into_record(self))
            .collect::<Result<Vec<_>, _>>()?;
        self.attach_idle(run_id, &mut trials)?;
        Ok(trials)
    }

    fn missing_scenario(&self, run_id: &str, scenario_index: u32) -> StoreError {
        match self.run_record(run_id) {
            Ok(_) => StoreError::UnknownScenario {
                path: self.path.clone(),
                run_id: run_id.to_owned(),
                scenario_index,
            },
            Err(error) => error,
        }
    }
}

fn scenario_exists(tx: &Transaction<'_>, run_id: &str, index: u32) -> rusqlite::Result<bool> {
    tx.query_row(
        "SELECT 1 FROM scenarios WHERE run_id = ?1 AND idx = ?2",
        rusqlite::params![run_id, index],
        |_| Ok(()),
    )
    .optional()
    .map(|found| found.is_some())
}

/// Inserts the trial's row with its program figures and idle measurement.
pub(crate) fn insert_trial_rows(
    tx: &Transaction<'_>,
    run_id: &str,
    trial: &TrialRecord,
    path: &Path,
) -> Result<(), StoreError> {
    let fail = |e| classify(e, path, "storing the trial", Some(run_id));
    match insert_trial(tx, run_id, trial, path)? {
        Err(e) if is_duplicate(&e) => Err(StoreError::TrialExists {
            path: path.to_path_buf(),
            run_id: run_id.to_owned(),
            scenario_index: trial.scenario_index,
            trial_index: trial.trial_index,
        }),
        Err(e) => Err(fail(e)),
        Ok(_) => {
            insert_program_metrics(tx, run_id, trial).map_err(fail)?;
            crate::idle::insert_idle(tx, run_id, trial).map_err(fail)
        }
    }
}

const INSERT_TRIAL: &str = "INSERT INTO trials (run_id, scenario_idx, trial_idx, sequence, \
    status, failure, started_at_unix_ms, requests, requests_per_s, latency_mean_us, \
    latency_p50_us, latency_p90_us, latency_p99_us, latency_p999_us, latency_max_us, \
    errors_total, error_rate, generator_cpu_us_per_request, generator_utilization, \
    generator_bound, server_samples, server_cpu_pct_mean, server_cpu_user_pct_mean, \
    server_cpu_system_pct_mean, server_rss_mean_bytes, server_rss_peak_bytes, \
    server_threads_peak, server_processes_peak, server_ctx_voluntary, server_ctx_involuntary, \
    tasks_before, tasks_peak, tasks_after, load_json, latency_hdr, latency_uncorrected_hdr, \
    connect_latency_hdr, timeline_json, resource_series_json, flags_json, program_json, \
    counters_json, probe_json, pool_json) \
    VALUES (:run_id, :scenario_idx, :trial_idx, :sequence, :status, :failure, :started, \
    :requests, :requests_per_s, :latency_mean_us, :p50, :p90, :p99, :p999, :max_us, \
    :errors_total, :error_rate, :generator_cpu, :generator_utilization, :generator_bound, \
    :samples, :cpu, :cpu_user, :cpu_system, :rss_mean, :rss_peak, :threads_peak, \
    :processes_peak, :ctx_voluntary, :ctx_involuntary, :tasks_before, :tasks_peak, \
    :tasks_after, :load_json, :latency_hdr, :latency_uncorrected_hdr, :connect_latency_hdr, \
    :timeline_json, :series, :flags, :program, :counters, :probe, :pool)";

/// Inserts the row; the outer error is an encoding failure, the inner one
/// SQLite's answer (a duplicate among them).
fn insert_trial(
    tx: &Transaction<'_>,
    run_id: &str,
    trial: &TrialRecord,
    path: &Path,
) -> Result<rusqlite::Result<usize>, StoreError> {
    let report = trial.load.as_ref();
    let latency = report.map(|l| &l.latency.summary);
    let resources = trial.resources.as_ref();
    let columns = report.map(|l| split_load(l, path)).transpose()?;
    let columns = columns.as_ref();
    Ok(tx.execute(
        INSERT_TRIAL,
        named_params! {
            ":run_id": run_id,
            ":scenario_idx": trial.scenario_index,
            ":trial_idx": trial.trial_index,
            ":sequence": trial.sequence,
            ":status": trial.status.as_str(),
            ":failure": trial.failure,
            ":started": trial.started_at_unix_ms,
            ":requests": report.map(|l| l.requests),
            ":requests_per_s": report.map(|l| l.requests_per_s),
            ":latency_mean_us": latency.map(|s| s.mean_us),
            ":p50": latency.and_then(|s| s.percentile_us(50.0)),
            ":p90": latency.and_then(|s| s.percentile_us(90.0)),
            ":p99": latency.and_then(|s| s.percentile_us(99.0)),
            ":p999": latency.and_then(|s| s.percentile_us(99.9)),
            ":max_us": latency.map(|s| s.max_us),
            ":errors_total": report.map(|l| l.errors.total()),
            ":error_rate": report.map(|l| l.error_rate),
            ":generator_cpu": report.map(|l| l.generator.cpu_us_per_request),
            ":generator_utilization": report.map(|l| l.generator.utilization),
            ":generator_bound": report.map(LoadReport::generator_bound),
            ":samples": resources.map(|r| r.samples),
            ":cpu": resources.map(|r| r.cpu_pct_mean),
            ":cpu_user": resources.map(|r| r.cpu_user_pct_mean),
            ":cpu_system": resources.map(|r| r.cpu_system_pct_mean),
            ":rss_mean": resources.map(|r| r.rss_mean_bytes),
            ":rss_peak": resources.map(|r| r.rss_peak_bytes),
            ":threads_peak": resources.map(|r| r.threads_peak),
            ":processes_peak": resources.map(|r| r.processes_peak),
            ":ctx_voluntary": resources.map(|r| r.ctx_voluntary),
            ":ctx_involuntary": resources.map(|r| r.ctx_involuntary),
            ":tasks_before": trial.tasks.before,
            ":tasks_peak": trial.tasks.peak,
            ":tasks_after": trial.tasks.after,
            ":load_json": columns.map(|c| &c.json),
            ":latency_hdr": columns.map(|c| &c.latency_hdr),
            ":latency_uncorrected_hdr": columns.and_then(|c| c.latency_uncorrected_hdr.as_ref()),
            ":connect_latency_hdr": columns.and_then(|c| c.connect_latency_hdr.as_ref()),
            ":timeline_json": columns.map(|c| &c.timeline_json),
            ":series": to_json(&trial.resource_series, "resource series", path)?,
            ":flags": to_json(&trial.flags, "trial flags", path)?,
            ":program": trial
                .program
                .as_ref()
                .map(|p| to_json(p, "program result", path))
                .transpose()?,
            ":counters": trial
                .counters
                .as_ref()
                .map(|c| to_json(c, "kernel counters", path))
                .transpose()?,
            ":probe": trial
                .probe
                .as_ref()
                .map(|p| to_json(p, "machine probe", path))
                .transpose()?,
            ":pool": trial
                .pool
                .as_ref()
                .map(|p| to_json(p, "pool counters", path))
                .transpose()?,
        },
    ))
}

/// A trial row before its JSON and BLOB columns are decoded.
struct TrialRow {
    scenario_index: u32,
    trial_index: u32,
    sequence: u32,
    status: String,
    failure: Option<String>,
    started_at_unix_ms: i64,
    load_json: Option<String>,
    latency_hdr: Option<Vec<u8>>,
    latency_uncorrected_hdr: Option<Vec<u8>>,
    connect_latency_hdr: Option<Vec<u8>>,
    timeline_json: Option<String>,
    resources: Option<ResourceSummary>,
    tasks: TaskCounts,
    resource_series_json: String,
    flags_json: String,
    program_json: Option<String>,
    counters_json: Option<String>,
    probe_json: Option<String>,
    pool_json: Option<String>,
}

impl TrialRow {
    fn read(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            scenario_index: row.get("scenario_idx")?,
            trial_index: row.get("trial_idx")?,
            sequence: row.get("sequence")?,
            status: row.get("status")?,
            failure: row.get("failure")?,
            started_at_unix_ms: row.get("started_at_unix_ms")?,
            load_json: row.get("load_json")?,
            latency_hdr: row.get("latency_hdr")?,
            latency_uncorrected_hdr: row.get("latency_uncorrected_hdr")?,
            connect_latency_hdr: row.get("connect_latency_hdr")?,
            timeline_json: row.get("timeline_json")?,
            resources: read_resources(row)?,
            tasks: TaskCounts {
                before: row.get("tasks_before")?,
                peak: row.get("tasks_peak")?,
                after: row.get("tasks_after")?,
            },
            resource_series_json: row.get("resource_series_json")?,
            flags_json: row.get("flags_json")?,
            program_json: row.get("program_json")?,
            counters_json: row.get("counters_json")?,
            probe_json: row.get("probe_json")?,
            pool_json: row.get("pool_json")?,
        })
    }

    fn into_record(self, store: &Store) -> Result<TrialRecord, StoreError> {
        let path = &store.path;
        let load = match (self.load_json, self.latency_hdr, self.timeline_json) {
            (Some(json), Some(hdr), Some(timeline)) => Some(join_load(
                &json,
                &hdr,
                self.latency_uncorrected_hdr.as_deref(),
                self.connect_latency_hdr.as_deref(),
                &timeline,
                path,
            )?),
            (None, None, None) => None,
            _ => {
                return Err(decode_error(
                    path,
                    "load report",
                    "its JSON, histogram and timeline columns are not all set or all empty",
                ));
            }
        };
        Ok(TrialRecord {
            scenario_index: self.scenario_index,
            trial_index: self.trial_index,
            sequence: self.sequence,
            status: trial_status(&self.status, path)?,
            failure: self.failure,
            started_at_unix_ms: self.started_at_unix_ms,
            load,
            resources: self.resources,
            resource_series: from_json(&self.resource_series_json, "resource series", path)?,
            tasks: self.tasks,
            flags: from_json(&self.flags_json, "trial flags", path)?,
            program: self
                .program_json
                .as_deref()
                .map(|json| from_json(json, "program result", path))
                .transpose()?,
            counters: self
                .counters_json
                .as_deref()
                .map(|json| from_json(json, "kernel counters", path))
                .transpose()?,
            idle: None,
            probe: self
                .probe_json
                .as_deref()
                .map(|json| from_json(json, "machine probe", path))
                .transpose()?,
            pool: self
                .pool_json
                .as_deref()
                .map(|json| from_json(json, "pool counters", path))
                .transpose()?,
        })
    }
}

/// Every figure a program reported, one row each, for plain SQL.
fn insert_program_metrics(
    tx: &Transaction<'_>,
    run_id: &str,
    trial: &TrialRecord,
) -> rusqlite::Result<()> {
    let Some(program) = &trial.program else {
        return Ok(());
    };
    let mut statement = tx.prepare(
        "INSERT INTO program_metrics (run_id, scenario_idx, trial_idx, position, unit, value) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (position, metric) in program.metrics.iter().enumerate() {
        statement.execute(rusqlite::params![
            run_id,
            trial.scenario_index,
            trial.trial_index,
            position,
            metric.unit,
            metric.value
        ])?;
    }
    Ok(())
}

/// The resource summary columns, `None` when the trial was not sampled.
/// SQLite stores a NaN as NULL, so a NULL mean reads back as NaN.
fn read_resources(row: &Row<'_>) -> rusqlite::Result<Option<ResourceSummary>> {
    let Some(samples) = row.get("server_samples")? else {
        return Ok(None);
    };
    let mean = |column: &str| -> rusqlite::Result<f64> {
        Ok(row.get::<_, Option<f64>>(column)?.unwrap_or(f64::NAN))
    };
    Ok(Some(ResourceSummary {
        samples,
        cpu_pct_mean: mean("server_cpu_pct_mean")?,
        cpu_user_pct_mean: mean("server_cpu_user_pct_mean")?,
        cpu_system_pct_mean: mean("server_cpu_system_pct_mean")?,
        rss_mean_bytes: row.get("server_rss_mean_bytes")?,
        rss_peak_bytes: row.get("server_rss_peak_bytes")?,
        threads_peak: row.get("server_threads_peak")?,
        processes_peak: row.get("server_processes_peak")?,
        ctx_voluntary: row.get("server_ctx_voluntary")?,
        ctx_involuntary: row.get("server_ctx_involuntary")?,
    }))
}
