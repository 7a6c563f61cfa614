//! `--format json`: the whole analysis (with the run's provenance) as one
//! pretty-printed document; its schema is docs/schema/report.schema.json.

use std::io::Write;

use serde::Serialize;

use crate::ReportError;

/// Writes `document` pretty-printed, with a final newline.
pub(crate) fn write(document: &impl Serialize, out: &mut dyn Write) -> Result<(), ReportError> {
    serde_json::to_writer_pretty(&mut *out, document)?;
    writeln!(out)?;
    Ok(())
}
