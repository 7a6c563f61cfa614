//! Model values ⇄ column values: JSON documents, histogram BLOBs, enums as text.

use std::path::Path;

use corobench_model::{
    LatencyHistogram, LatencyReport, LoadReport, RunStatus, TimelineSecond, TrialStatus,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::StoreError;

pub(crate) fn to_json<T: Serialize>(
    value: &T,
    what: &'static str,
    path: &Path,
) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Encode {
        path: path.to_path_buf(),
        what,
        reason: e.to_string(),
    })
}

pub(crate) fn from_json<T: DeserializeOwned>(
    text: &str,
    what: &str,
    path: &Path,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| decode_error(path, what, e))
}

pub(crate) fn decode_error(path: &Path, what: &str, reason: impl ToString) -> StoreError {
    StoreError::Decode {
        path: path.to_path_buf(),
        what: what.to_owned(),
        reason: reason.to_string(),
    }
}

pub(crate) fn run_status(text: &str, path: &Path) -> Result<RunStatus, StoreError> {
    [
        RunStatus::Running,
        RunStatus::Complete,
        RunStatus::Interrupted,
        RunStatus::Failed,
    ]
    .into_iter()
    .find(|status| status.as_str() == text)
    .ok_or_else(|| decode_error(path, "run status", format!("unknown status `{text}`")))
}

pub(crate) fn trial_status(text: &str, path: &Path) -> Result<TrialStatus, StoreError> {
    [TrialStatus::Ok, TrialStatus::Failed]
        .into_iter()
        .find(|status| status.as_str() == text)
        .ok_or_else(|| decode_error(path, "trial status", format!("unknown status `{text}`")))
}

/// A load report as stored: the histograms and the timeline in their own
/// columns, everything else as one JSON document.
#[derive(Debug)]
pub(crate) struct LoadColumns {
    pub json: String,
    pub latency_hdr: Vec<u8>,
    pub latency_uncorrected_hdr: Option<Vec<u8>>,
    pub connect_latency_hdr: Option<Vec<u8>>,
    pub timeline_json: String,
}

const HISTOGRAM_KEY: &str = "hdr_v2_base64";
const TIMELINE_KEY: &str = "timeline";
const LATENCY_KEYS: [&str; 3] = ["latency", "latency_uncorrected", "connect_latency"];

pub(crate) fn split_load(load: &LoadReport, path: &Path) -> Result<LoadColumns, StoreError> {
    let encode_error = |e: serde_json::Error| StoreError::Encode {
        path: path.to_path_buf(),
        what: "load report",
        reason: e.to_string(),
    };
    let mut document = serde_json::to_value(load).map_err(encode_error)?;
    if let Value::Object(fields) = &mut document {
        fields.remove(TIMELINE_KEY);
        for key in LATENCY_KEYS {
            if let Some(Value::Object(latency)) = fields.get_mut(key) {
                latency.remove(HISTOGRAM_KEY);
            }
        }
    }
    Ok(LoadColumns {
        json: serde_json::to_string(&document).map_err(encode_error)?,
        latency_hdr: load.latency.histogram.to_v2_bytes(),
        latency_uncorrected_hdr: load
            .latency_uncorrected
            .as_ref()
            .map(|report| report.histogram.to_v2_bytes()),
        connect_latency_hdr: load
            .connect_latency
            .as_ref()
            .map(|report| report.histogram.to_v2_bytes()),
        timeline_json: to_json(&load.timeline, "timeline", path)?,
    })
}

/// Puts a load report back together from its columns.
pub(crate) fn join_load(
    json: &str,
    latency_hdr: &[u8],
    latency_uncorrected_hdr: Option<&[u8]>,
    connect_latency_hdr: Option<&[u8]>,
    timeline_json: &str,
    path: &Path,
) -> Result<LoadReport, StoreError> {
    let mut document: Value = from_json(json, "load report", path)?;
    // The histograms are decoded from their BLOBs below; an empty one
    // stands in so the document has the shape the model expects.
    let placeholder = Value::String(LatencyHistogram::new().to_base64());
    if let Value::Object(fields) = &mut document {
        fields.insert(TIMELINE_KEY.to_owned(), Value::Array(Vec::new()));
        for key in LATENCY_KEYS {
            if let Some(Value::Object(latency)) = fields.get_mut(key) {
                latency.insert(HISTOGRAM_KEY.to_owned(), placeholder.clone());
            }
        }
    }
    let mut load: LoadReport =
        serde_json::from_value(document).map_err(|e| decode_error(path, "load report", e))?;
    load.latency.histogram = histogram(latency_hdr, "latency histogram", path)?;
    let uncorrected = load.latency_uncorrected.as_mut();
    optional_histogram(
        uncorrected,
        latency_uncorrected_hdr,
        "uncorrected latency",
        path,
    )?;
    let connect = load.connect_latency.as_mut();
    optional_histogram(connect, connect_latency_hdr, "connect time", path)?;
    load.timeline = from_json::<Vec<TimelineSecond>>(timeline_json, "timeline", path)?;
    Ok(load)
}

/// Puts an optional histogram back into its summary; both or neither must exist.
fn optional_histogram(
    report: Option<&mut LatencyReport>,
    bytes: Option<&[u8]>,
    what: &str,
    path: &Path,
) -> Result<(), StoreError> {
    let what = format!("{what} histogram");
    match (report, bytes) {
        (Some(report), Some(bytes)) => {
            report.histogram = histogram(bytes, &what, path)?;
            Ok(())
        }
        (None, None) => Ok(()),
        (Some(_), None) | (None, Some(_)) => Err(decode_error(
            path,
            &what,
            "the histogram and its summary disagree on whether it exists",
        )),
    }
}

fn histogram(bytes: &[u8], what: &str, path: &Path) -> Result<LatencyHistogram, StoreError> {
    LatencyHistogram::from_v2_bytes(bytes).map_err(|e| decode_error(path, what, e))
}
