//! `corobench merge A.json B.json …`: one exact report from the reports of
//! several generators that loaded the same server at the same time.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use corobench_load::MergeInput;
use corobench_model::LoadReport;
use corobench_model::load::LOAD_REPORT_SCHEMA_VERSION;

use crate::exit::{self, Exit};
use crate::values;
use corobench_report::merge_summary;

/// Flags of `corobench merge`.
#[derive(Debug, Args)]
#[command(
    after_help = "The reports must be of the same URL, method, schedule kind and \
    connection use, and their measured windows must overlap (start every generator with the \
    same --start-at and -d). A merged report can be merged again.\n\n\
    Examples:\n  \
    corobench merge gen-1.json gen-2.json\n  \
    corobench merge --json gen-*.json > merged.json"
)]
pub struct MergeArgs {
    /// Reports written by `corobench load --json` (or by `corobench merge --json`)
    #[arg(value_name = "REPORT", required = true)]
    pub reports: Vec<PathBuf>,

    /// Print the merged report as JSON: the shape of `corobench load --json`
    /// plus `merged`, the per-generator detail (same as --format json)
    #[arg(long)]
    pub json: bool,

    /// How to print the merged report
    #[arg(long, value_enum, default_value_t = MergeFormat::Text)]
    pub format: MergeFormat,

    /// Latency percentiles to show, e.g. 50,90,99,99.9
    #[arg(long, value_delimiter = ',', value_parser = values::parse_percentile, value_name = "LIST")]
    pub percentiles: Vec<f64>,
}

/// `--format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MergeFormat {
    /// The summary `corobench load` prints, then one row per generator
    Text,
    /// The merged report as JSON
    Json,
}

/// Runs `corobench merge`.
///
/// # Errors
/// An unreadable file, a file that is no load report, or reports that
/// cannot be merged (exit 2).
pub fn run(args: &MergeArgs) -> anyhow::Result<Exit> {
    let merged = merge_files(&args.reports)?;
    let json = args.json || args.format == MergeFormat::Json;
    super::shared::print_load_report(&merged, json, &args.percentiles, merge_summary::render)?;
    Ok(Exit::Success)
}

/// The reports in these files, merged; each generator is named by its file.
///
/// # Errors
/// An unreadable file, a file that is no load report, or reports that
/// cannot be merged (exit 2).
pub fn merge_files(paths: &[PathBuf]) -> anyhow::Result<LoadReport> {
    let reports = paths
        .iter()
        .map(|path| read_report(path))
        .collect::<anyhow::Result<Vec<LoadReport>>>()?;
    let sources: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let inputs: Vec<MergeInput<'_>> = sources
        .iter()
        .zip(&reports)
        .map(|(source, report)| MergeInput { source, report })
        .collect();
    corobench_load::merge(&inputs).map_err(anyhow::Error::from)
}

/// One report, read and checked to be a load report this version understands.
fn read_report(path: &Path) -> anyhow::Result<LoadReport> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| exit::usage(format!("cannot read {}: {e}", path.display())))?;
    let report: LoadReport = serde_json::from_str(&text).map_err(|e| {
        exit::usage(format!(
            "{} is not a load report written by `corobench load --json`: {e}",
            path.display()
        ))
    })?;
    if report.schema_version != LOAD_REPORT_SCHEMA_VERSION {
        return Err(exit::usage(format!(
            "{} is a load report of schema version {}, and this corobench reads version {}; \
             merge it with the corobench that wrote it",
            path.display(),
            report.schema_version,
            LOAD_REPORT_SCHEMA_VERSION
        )));
    }
    Ok(report)
}
