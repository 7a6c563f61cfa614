//! `background` on a workload: a GET kept in flight on HTTP/2 streams of
//! every connection beside the measured requests, reopened as each ends
//! (`background_streams` of them, 1 unless set), so that the measured
//! requests' latency shows what one slow stream does to the fast ones on
//! the same connection (head-of-line blocking). Only HTTP/2 has streams
//! beside each other, so every schedule of the workload must speak it.

use corobench_model::{BackgroundRecord, MAX_STREAMS, Schedule};

use crate::document::{self, Table};
use crate::error::{Locator, SpecError};

/// The workload's background request, checked against its `schedules`.
pub(super) fn read(
    table: &Table<'_>,
    schedules: &[Schedule],
    at: &Locator<'_>,
) -> Result<Option<BackgroundRecord>, SpecError> {
    let Some(field) = table.get("background") else {
        if let Some(streams) = table.get("background_streams") {
            let message = "background_streams needs the request they carry: add \
                           background = \"/io?ms=200\"";
            return Err(at.at(streams.value.span(), &streams.path, message));
        }
        return Ok(None);
    };
    let path = super::workloads::request_path(field, at)?;
    let streams = match table.get("background_streams") {
        None => 1,
        Some(streams) => {
            let n =
                document::integer(streams.value, &streams.path, 1..=i64::from(MAX_STREAMS), at)?;
            u32::try_from(n).unwrap_or(1)
        }
    };
    for schedule in schedules {
        if !schedule.protocol.is_h2() {
            let message = format!(
                "a background request runs on streams beside the measured ones on the same \
                 connection, which only HTTP/2 has, and this workload speaks {} in one of its \
                 schedules: set protocol = \"h2c\" or \"h2\"",
                schedule.protocol.name()
            );
            return Err(at.at(field.value.span(), &field.path, message));
        }
        if !schedule.keepalive {
            let message = "a background request needs connections kept alive: drop \
                           keepalive = false";
            return Err(at.at(field.value.span(), &field.path, message));
        }
        if u64::from(schedule.streams) + u64::from(streams) > u64::from(MAX_STREAMS) {
            let message = format!(
                "{} measured and {streams} background streams are more than {MAX_STREAMS} per \
                 connection",
                schedule.streams
            );
            return Err(at.at(field.value.span(), &field.path, message));
        }
    }
    Ok(Some(BackgroundRecord { path, streams }))
}
