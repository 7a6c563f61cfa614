//! Scenarios: target × parameters × workload × schedule, stored with their run.

use std::path::Path;

use corobench_model::{
    BackgroundRecord, Protocol, ScenarioRecord, ScheduleKind, WireMode, WorkloadRecord,
};
use rusqlite::{Row, Transaction, named_params};

use crate::error::{StoreError, is_duplicate};
use crate::rows::{decode_error, from_json, to_json};
use crate::store::Store;

impl Store {
    /// The run's scenarios in plan order.
    pub(crate) fn scenario_records(&self, run_id: &str) -> Result<Vec<ScenarioRecord>, StoreError> {
        self.query_rows(
            "SELECT idx, key, target, parameters_json, workload, method, path, body_bytes, \
             schedule, rate_per_s, connections, warmup_s, duration_s, program_json, \
             keepalive, pipeline, idle, protocol, streams, tls_resume, background_path, \
             background_streams \
             FROM scenarios WHERE run_id = ?1 ORDER BY idx",
            [run_id],
            "loading the scenarios",
            ScenarioRow::read,
        )?
        .into_iter()
        .map(|row| row.into_record(&self.path))
        .collect()
    }
}

pub(crate) fn insert_scenario(
    tx: &Transaction<'_>,
    run_id: &str,
    scenario: &ScenarioRecord,
    path: &Path,
) -> Result<(), StoreError> {
    let (schedule, rate_per_s) = match scenario.schedule {
        ScheduleKind::Closed => ("closed", None),
        ScheduleKind::Open { rate_per_s } => ("open", Some(rate_per_s)),
    };
    let parameters = to_json(&scenario.parameters, "scenario parameters", path)?;
    let program = scenario
        .program
        .as_ref()
        .map(|p| to_json(p, "program scenario", path))
        .transpose()?;
    let background = scenario.workload.background.as_ref();
    let inserted = tx.execute(
        "INSERT INTO scenarios (run_id, idx, key, target, parameters_json, workload, method, \
         path, body_bytes, schedule, rate_per_s, connections, warmup_s, duration_s, \
         program_json, keepalive, pipeline, idle, protocol, streams, tls_resume, \
         background_path, background_streams) \
         VALUES (:run_id, :idx, :key, :target, :parameters, :workload, :method, :path, \
         :body_bytes, :schedule, :rate_per_s, :connections, :warmup_s, :duration_s, :program, \
         :keepalive, :pipeline, :idle, :protocol, :streams, :tls_resume, :background_path, \
         :background_streams)",
        named_params! {
            ":run_id": run_id,
            ":idx": scenario.index,
            ":key": scenario.key.as_str(),
            ":target": scenario.target,
            ":parameters": parameters,
            ":workload": scenario.workload.name,
            ":method": scenario.workload.method,
            ":path": scenario.workload.path,
            ":body_bytes": scenario.workload.body_bytes,
            ":schedule": schedule,
            ":rate_per_s": rate_per_s,
            ":connections": scenario.connections,
            ":warmup_s": scenario.warmup_s,
            ":duration_s": scenario.duration_s,
            ":program": program,
            ":keepalive": scenario.wire.keepalive,
            ":pipeline": scenario.wire.pipeline,
            ":idle": scenario.workload.idle,
            ":protocol": (!scenario.protocol.is_http1()).then(|| scenario.protocol.name()),
            ":streams": (scenario.wire.streams != 1).then_some(scenario.wire.streams),
            ":tls_resume": (!scenario.wire.tls_resume).then_some(false),
            ":background_path": background.map(|b| b.path.as_str()),
            ":background_streams": background.map(|b| b.streams),
        },
    );
    match inserted {
        Ok(_) => Ok(()),
        Err(e) if is_duplicate(&e) => Err(StoreError::Encode {
            path: path.to_path_buf(),
            what: "scenario",
            reason: format!(
                "scenario {} (`{}`) repeats the index or key of another scenario of the run",
                scenario.index, scenario.key
            ),
        }),
        Err(source) => Err(StoreError::Sqlite {
            path: path.to_path_buf(),
            doing: "storing a scenario",
            source,
        }),
    }
}

/// A scenario row before its text columns are decoded.
struct ScenarioRow {
    index: u32,
    key: String,
    target: String,
    parameters_json: String,
    workload: WorkloadRecord,
    schedule: String,
    rate_per_s: Option<f64>,
    connections: u32,
    warmup_s: f64,
    duration_s: f64,
    program_json: Option<String>,
    wire: WireMode,
    /// `None`: cleartext HTTP/1.1.
    protocol: Option<String>,
}

impl ScenarioRow {
    fn read(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            index: row.get(0)?,
            key: row.get(1)?,
            target: row.get(2)?,
            parameters_json: row.get(3)?,
            workload: WorkloadRecord {
                name: row.get(4)?,
                method: row.get(5)?,
                path: row.get(6)?,
                body_bytes: row.get(7)?,
                idle: row.get(16)?,
                background: match (row.get::<_, Option<String>>(20)?, row.get(21)?) {
                    (Some(path), Some(streams)) => Some(BackgroundRecord { path, streams }),
                    _ => None,
                },
            },
            schedule: row.get(8)?,
            rate_per_s: row.get(9)?,
            connections: row.get(10)?,
            warmup_s: row.get(11)?,
            duration_s: row.get(12)?,
            program_json: row.get(13)?,
            wire: WireMode {
                keepalive: row.get(14)?,
                pipeline: row.get(15)?,
                streams: row.get::<_, Option<u32>>(18)?.unwrap_or(1),
                tls_resume: row.get::<_, Option<bool>>(19)?.unwrap_or(true),
            },
            protocol: row.get(17)?,
        })
    }

    fn into_record(self, path: &Path) -> Result<ScenarioRecord, StoreError> {
        let schedule = match (self.schedule.as_str(), self.rate_per_s) {
            ("closed", None) => ScheduleKind::Closed,
            ("open", Some(rate_per_s)) => ScheduleKind::Open { rate_per_s },
            (other, _) => {
                return Err(decode_error(
                    path,
                    "scenario schedule",
                    format!("`{other}` with rate {:?}", self.rate_per_s),
                ));
            }
        };
        let protocol = match self.protocol.as_deref() {
            None => Protocol::HTTP1,
            Some(name) => name
                .parse()
                .map_err(|e: corobench_model::UnknownProtocol| {
                    decode_error(path, "scenario protocol", e.to_string())
                })?,
        };
        Ok(ScenarioRecord {
            index: self.index,
            key: self.key.into(),
            target: self.target,
            parameters: from_json(&self.parameters_json, "scenario parameters", path)?,
            workload: self.workload,
            schedule,
            connections: self.connections,
            wire: self.wire,
            protocol,
            program: self
                .program_json
                .as_deref()
                .map(|json| from_json(json, "program scenario", path))
                .transpose()?,
            warmup_s: self.warmup_s,
            duration_s: self.duration_s,
        })
    }
}
