//! The run file: stored runs as one portable file, so evidence travels
//! between machines and lives in a repository.
//!
//! A run file is gzip-compressed JSON (read it with `zcat FILE | jq`):
//! `{"format": "corobench-runs", "version": 1, "runs": [...]}`. Each run
//! holds everything a report reads: the run record (spec, provenance,
//! claims, settings), its scenarios, its trials (load reports with their
//! histograms in HdrHistogram V2 + DEFLATE, base64; counters, samples,
//! probe, pool, program figures, idle measurements) and its profiles with
//! their folded stacks. The writer is deterministic: the same runs give
//! the same bytes, so a file committed twice does not change.

use std::fs::{self, File};
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

use corobench_model::{
    ProfileOutcome, ProfileRecord, RunRecord, RunStatus, ScenarioRecord, StoredRun, TrialRecord,
};
use flate2::Compression;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the `format` key of every run file says.
pub const RUN_FILE_FORMAT: &str = "corobench-runs";
/// The run file version this corobench writes, and the newest it reads.
pub const RUN_FILE_VERSION: u32 = 1;

/// The most JSON a run file may inflate to: far above any real run (a
/// run of 10,000 trials takes about 100 MB), and a bound on what a
/// crafted file can make corobench allocate.
const MAX_INFLATED_BYTES: u64 = 2 << 30;

/// The first bytes of a gzip stream.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// The first bytes of an SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

const HISTOGRAM_KEY: &str = "hdr_v2_base64";

/// A run file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RunFileError {
    #[error("cannot read {}: {source}", path.display())]
    Unreadable { path: PathBuf, source: io::Error },
    #[error("cannot write {}: {source}; check that its folder exists and is writable", path.display())]
    Unwritable { path: PathBuf, source: io::Error },
    #[error(
        "{} is not a corobench run file ({reason}); a run file is what exporting runs writes",
        path.display()
    )]
    NotARunFile { path: PathBuf, reason: String },
    #[error(
        "{} is truncated: it ends before its compressed data does (an interrupted copy or \
         download); copy or export it again",
        path.display()
    )]
    Truncated { path: PathBuf },
    #[error(
        "{} was written by a newer corobench (run file version {found}; this one reads version \
         {known} at most); upgrade corobench",
        path.display()
    )]
    NewerVersion {
        path: PathBuf,
        found: u64,
        known: u32,
    },
    #[error(
        "{}: {what} cannot be read ({reason}); the file was changed by hand or is damaged",
        path.display()
    )]
    Damaged {
        path: PathBuf,
        what: String,
        reason: String,
    },
    #[error("{}: the {what} cannot be encoded ({source})", path.display())]
    Encode {
        path: PathBuf,
        what: String,
        source: serde_json::Error,
    },
}

/// What a file given to import holds, judged by its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunSource {
    /// A run file.
    RunFile,
    /// An SQLite database (a results database from another machine).
    Database,
}

impl RunSource {
    /// Tells a run file from a database.
    ///
    /// # Errors
    /// When the file cannot be read, or is neither.
    pub fn of(path: &Path) -> Result<Self, RunFileError> {
        let mut head = Vec::with_capacity(SQLITE_MAGIC.len());
        File::open(path)
            .and_then(|f| f.take(SQLITE_MAGIC.len() as u64).read_to_end(&mut head))
            .map_err(|source| RunFileError::Unreadable {
                path: path.to_path_buf(),
                source,
            })?;
        if head.starts_with(&GZIP_MAGIC) {
            Ok(Self::RunFile)
        } else if head.as_slice() == SQLITE_MAGIC {
            Ok(Self::Database)
        } else {
            Err(RunFileError::NotARunFile {
                path: path.to_path_buf(),
                reason: "it is neither gzip-compressed nor an SQLite database".to_owned(),
            })
        }
    }
}

/// One run as the file holds it.
#[derive(Serialize)]
struct RunOut<'a> {
    run: &'a RunRecord,
    trials_per_scenario: u32,
    scenarios: &'a [ScenarioRecord],
    trials: Vec<Value>,
    profiles: Vec<ProfileDocument>,
}

/// One run as read back: decoded part by part, so an error names the part.
#[derive(Deserialize)]
struct RunIn {
    run: Value,
    trials_per_scenario: u32,
    scenarios: Value,
    trials: Vec<Value>,
    #[serde(default)]
    profiles: Vec<ProfileDocument>,
}

/// A profile with its folded stacks, which reports leave out of their JSON.
#[derive(Serialize, Deserialize)]
struct ProfileDocument {
    scenario_index: u32,
    frequency_hz: u32,
    started_at_unix_ms: i64,
    #[serde(flatten)]
    outcome: OutcomeDocument,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
enum OutcomeDocument {
    Captured { samples: u64, folded_stacks: String },
    Skipped { reason: String },
}

#[derive(Serialize)]
struct Envelope<'a> {
    format: &'a str,
    version: u32,
    runs: Vec<RunOut<'a>>,
}

/// The two keys read before the rest, so a newer file is refused before
/// its runs are decoded.
#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<u64>,
}

#[derive(Deserialize)]
struct Runs {
    runs: Vec<RunIn>,
}

/// Writes `runs` to `path` as one run file, replacing it only once the
/// whole file is written (a failure leaves no half file behind).
///
/// # Errors
/// When a run cannot be encoded or the file cannot be written.
pub fn write_run_file(path: &Path, runs: &[StoredRun]) -> Result<(), RunFileError> {
    let bytes = encode(runs, path)?;
    let unwritable = |source| RunFileError::Unwritable {
        path: path.to_path_buf(),
        source,
    };
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Made with the mode any new file gets (0666 less the umask), not the
    // 0600 of a scratch file.
    let mut partial = tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(folder)
        .map_err(unwritable)?;
    partial.write_all(&bytes).map_err(unwritable)?;
    partial.persist(path).map_err(|e| unwritable(e.error))?;
    Ok(())
}

/// The file's bytes: gzip (best compression, no name or time in the
/// header, so the same runs always give the same bytes) of the JSON.
fn encode(runs: &[StoredRun], path: &Path) -> Result<Vec<u8>, RunFileError> {
    let encode_error = |what: String| {
        move |source| RunFileError::Encode {
            path: path.to_path_buf(),
            what,
            source,
        }
    };
    let runs = runs
        .iter()
        .map(|run| run_out(run).map_err(encode_error(format!("run {}", run.run.id))))
        .collect::<Result<_, _>>()?;
    let envelope = Envelope {
        format: RUN_FILE_FORMAT,
        version: RUN_FILE_VERSION,
        runs,
    };
    let mut gzip = flate2::GzBuilder::new().write(Vec::new(), Compression::best());
    serde_json::to_writer(&mut gzip, &envelope).map_err(encode_error("runs".to_owned()))?;
    gzip.finish().map_err(|source| RunFileError::Unwritable {
        path: path.to_path_buf(),
        source,
    })
}

/// A run's canonical form: two stored runs are the same run exactly when
/// their canonical forms are equal (NaN included, which `==` on the
/// records would not grant).
pub(crate) fn canonical(run: &StoredRun) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&run_out(run)?)
}

fn run_out(run: &StoredRun) -> Result<RunOut<'_>, serde_json::Error> {
    Ok(RunOut {
        run: &run.run,
        trials_per_scenario: run.trials_per_scenario,
        scenarios: &run.scenarios,
        trials: run
            .trials
            .iter()
            .map(trial_value)
            .collect::<Result<_, _>>()?,
        profiles: run.profiles.iter().map(profile_document).collect(),
    })
}

/// A trial as JSON with its histograms in the compact encoding.
fn trial_value(trial: &TrialRecord) -> Result<Value, serde_json::Error> {
    let mut value = serde_json::to_value(trial)?;
    let (Some(load), Some(Value::Object(fields))) = (&trial.load, value.get_mut("load")) else {
        return Ok(value);
    };
    let reports = [
        ("latency", Some(&load.latency)),
        ("latency_uncorrected", load.latency_uncorrected.as_ref()),
        ("connect_latency", load.connect_latency.as_ref()),
    ];
    for (key, report) in reports {
        if let (Some(report), Some(Value::Object(latency))) = (report, fields.get_mut(key)) {
            let compact = report.histogram.to_compact_base64();
            latency.insert(HISTOGRAM_KEY.to_owned(), Value::String(compact));
        }
    }
    Ok(value)
}

fn profile_document(profile: &ProfileRecord) -> ProfileDocument {
    ProfileDocument {
        scenario_index: profile.scenario_index,
        frequency_hz: profile.frequency_hz,
        started_at_unix_ms: profile.started_at_unix_ms,
        outcome: match &profile.outcome {
            ProfileOutcome::Captured {
                samples,
                folded_stacks,
            } => OutcomeDocument::Captured {
                samples: *samples,
                folded_stacks: folded_stacks.clone(),
            },
            ProfileOutcome::Skipped { reason } => OutcomeDocument::Skipped {
                reason: reason.clone(),
            },
        },
    }
}

/// Reads every run of a run file, checking each completely before any is
/// returned.
///
/// # Errors
/// When the file cannot be read, is not a run file, is truncated, comes
/// from a newer corobench, or any part of any run cannot be decoded.
pub fn read_run_file(path: &Path) -> Result<Vec<StoredRun>, RunFileError> {
    let json = inflate(path)?;
    let damaged = |what: &str, e: &dyn std::fmt::Display| RunFileError::Damaged {
        path: path.to_path_buf(),
        what: what.to_owned(),
        reason: e.to_string(),
    };
    let not_ours = |reason: &str| RunFileError::NotARunFile {
        path: path.to_path_buf(),
        reason: reason.to_owned(),
    };
    let header: Header = serde_json::from_slice(&json)
        .map_err(|_| not_ours("its contents are not the JSON of a run file"))?;
    if header.format.as_deref() != Some(RUN_FILE_FORMAT) {
        return Err(not_ours("it holds no corobench runs"));
    }
    match header.version {
        Some(found) if found > u64::from(RUN_FILE_VERSION) => {
            return Err(RunFileError::NewerVersion {
                path: path.to_path_buf(),
                found,
                known: RUN_FILE_VERSION,
            });
        }
        Some(_) => {}
        None => return Err(damaged("the file version", &"it is missing")),
    }
    let runs: Runs = serde_json::from_slice(&json).map_err(|e| damaged("the runs", &e))?;
    runs.runs
        .into_iter()
        .enumerate()
        .map(|(position, run)| decode_run(run, position, path))
        .collect()
}

/// The JSON inside the gzip stream, at most [`MAX_INFLATED_BYTES`] of it.
fn inflate(path: &Path) -> Result<Vec<u8>, RunFileError> {
    let bytes = fs::read(path).map_err(|source| RunFileError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let damaged = |reason: String| RunFileError::Damaged {
        path: path.to_path_buf(),
        what: "its compressed data".to_owned(),
        reason,
    };
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Err(RunFileError::NotARunFile {
            path: path.to_path_buf(),
            reason: "it is not gzip-compressed".to_owned(),
        });
    }
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(bytes.as_slice())
        .take(MAX_INFLATED_BYTES + 1)
        .read_to_end(&mut json)
        .map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => RunFileError::Truncated {
                path: path.to_path_buf(),
            },
            _ => damaged(e.to_string()),
        })?;
    if json.len() as u64 > MAX_INFLATED_BYTES {
        return Err(damaged(format!(
            "it inflates beyond {MAX_INFLATED_BYTES} bytes"
        )));
    }
    Ok(json)
}

/// One run, every part decoded and checked against the others.
fn decode_run(run: RunIn, position: usize, path: &Path) -> Result<StoredRun, RunFileError> {
    let damaged = |what: String, reason: String| RunFileError::Damaged {
        path: path.to_path_buf(),
        what,
        reason,
    };
    let record: RunRecord = serde_json::from_value(run.run)
        .map_err(|e| damaged(format!("run {} of the file", position + 1), e.to_string()))?;
    let id = record.id.clone();
    if record.status == RunStatus::Running {
        return Err(damaged(
            format!("run {id}"),
            "it is marked as still running, and a run is exported only once it ended".to_owned(),
        ));
    }
    let scenarios: Vec<ScenarioRecord> = serde_json::from_value(run.scenarios)
        .map_err(|e| damaged(format!("the scenarios of run {id}"), e.to_string()))?;
    let trials = run
        .trials
        .into_iter()
        .map(|value| decode_trial(value, &scenarios))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|(what, reason)| damaged(format!("run {id}: {what}"), reason))?;
    let profiles = run
        .profiles
        .into_iter()
        .map(|profile| decode_profile(profile, &scenarios))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|(what, reason)| damaged(format!("run {id}: {what}"), reason))?;
    Ok(StoredRun {
        run: record,
        trials_per_scenario: run.trials_per_scenario,
        scenarios,
        trials,
        profiles,
    })
}

/// A trial of one of `scenarios`, or the part that failed and why.
fn decode_trial(
    value: Value,
    scenarios: &[ScenarioRecord],
) -> Result<TrialRecord, (String, String)> {
    let index = |key: &str| value.get(key).and_then(Value::as_u64);
    let what = match (index("trial_index"), index("scenario_index")) {
        (Some(trial), Some(scenario)) => format!("trial {trial} of scenario {scenario}"),
        _ => "a trial".to_owned(),
    };
    let trial: TrialRecord =
        serde_json::from_value(value).map_err(|e| (what.clone(), e.to_string()))?;
    if !scenarios.iter().any(|s| s.index == trial.scenario_index) {
        return Err((what, "the run has no such scenario".to_owned()));
    }
    Ok(trial)
}

fn decode_profile(
    profile: ProfileDocument,
    scenarios: &[ScenarioRecord],
) -> Result<ProfileRecord, (String, String)> {
    if !scenarios.iter().any(|s| s.index == profile.scenario_index) {
        return Err((
            format!("the profile of scenario {}", profile.scenario_index),
            "the run has no such scenario".to_owned(),
        ));
    }
    Ok(ProfileRecord {
        scenario_index: profile.scenario_index,
        frequency_hz: profile.frequency_hz,
        started_at_unix_ms: profile.started_at_unix_ms,
        outcome: match profile.outcome {
            OutcomeDocument::Captured {
                samples,
                folded_stacks,
            } => ProfileOutcome::Captured {
                samples,
                folded_stacks,
            },
            OutcomeDocument::Skipped { reason } => ProfileOutcome::Skipped { reason },
        },
    })
}
