//! Renders analysed corobench runs: a terminal table, Markdown, JSON, CSV,
//! the Go benchmark format (for benchstat) and a self-contained HTML page;
//! and the regression gate of a comparison as JUnit XML or GitHub annotations;
//! the human summary of one load (`load_summary`, `merge_summary`); and a
//! plan, before it runs (`plan`).
//!
//! One file per format. Reporters compute nothing: every figure, interval,
//! p-value and delta string comes from the [`RunAnalysis`] or
//! [`RunComparison`] handed in, so all formats agree.
//!
//! ```no_run
//! # fn demo(analysis: &corobench_model::RunAnalysis) -> Result<(), corobench_report::ReportError> {
//! use corobench_report::{Format, render};
//! render(Format::Table, analysis, &mut std::io::stdout().lock())?;
//! # Ok(()) }
//! ```

mod capacity;
mod csv;
mod csv_memory;
mod document;
mod gate;
mod gobench;
mod html;
mod json;
pub mod load_summary;
mod markdown;
pub mod merge_summary;
mod pages;
pub mod plan;
mod table;
pub mod units;

use std::fmt;
use std::io::{self, Write};

use corobench_model::{ClaimsAcrossMachines, RunAnalysis, RunComparison};

pub use gate::{GateFormat, gate_summary, render_gate};
pub use pages::{
    MachineReport, html_page_name, suite_page_name, write_results_index, write_runs_table,
    write_suite_page,
};

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// GitHub-flavoured Markdown tables.
    Markdown,
    /// Everything, as one JSON document (docs/schema/report.schema.json).
    Json,
    /// One row per scenario × metric.
    Csv,
    /// One row per trial × metric: the raw values behind every summary.
    CsvTrials,
    /// One row per published claim with its measured ratio and verdict.
    CsvClaims,
    /// One row per rate a capacity search tried, with the search's capacity.
    CsvCapacity,
    /// One row per target and idle workload: bytes per connection with its interval.
    CsvMemory,
    /// The Go benchmark format that `benchstat` reads.
    GoBench,
    /// One self-contained HTML page with charts.
    Html,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Self; 10] = [
        Self::Table,
        Self::Markdown,
        Self::Json,
        Self::Csv,
        Self::CsvTrials,
        Self::CsvClaims,
        Self::CsvCapacity,
        Self::CsvMemory,
        Self::GoBench,
        Self::Html,
    ];

    /// The name used on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Table => "table",
            Self::Markdown => "md",
            Self::Json => "json",
            Self::Csv => "csv",
            Self::CsvTrials => "csv-trials",
            Self::CsvClaims => "csv-claims",
            Self::CsvCapacity => "csv-capacity",
            Self::CsvMemory => "csv-memory",
            Self::GoBench => "gobench",
            Self::Html => "html",
        }
    }

    /// Other names the format answers to.
    #[must_use]
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Self::Markdown => &["markdown"],
            _ => &[],
        }
    }

    /// What the format holds, in a line.
    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Self::Table => "Aligned columns for a terminal",
            Self::Markdown => "Markdown tables",
            Self::Json => "Everything as JSON (docs/schema/report.schema.json)",
            Self::Csv => "One row per scenario × metric",
            Self::CsvTrials => "One row per trial × metric: the raw values",
            Self::CsvClaims => "One row per published claim: measured ratio and verdict",
            Self::CsvCapacity => "One row per rate a capacity search tried, with the capacity",
            Self::CsvMemory => "One row per target and idle workload: bytes per connection",
            Self::GoBench => "Go benchmark format for benchstat",
            Self::Html => "A self-contained HTML page with charts",
        }
    }

    /// Whether a comparison of two runs can be written in this format.
    #[must_use]
    pub fn supports_comparison(self) -> bool {
        matches!(self, Self::Table | Self::Markdown | Self::Json | Self::Csv)
    }

    /// The formats a comparison of two runs can be written in.
    pub fn comparison_formats() -> impl Iterator<Item = Self> {
        Self::ALL.into_iter().filter(|f| f.supports_comparison())
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How to draw: only the terminal table uses it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// ANSI colour: improvements green, regressions red, notes yellow. Set
    /// it only when writing to a terminal.
    pub color: bool,
    /// Every metric in the comparisons with the baseline; without it the
    /// table compares req/s and p99 only, a first look that fits a screen.
    /// The other formats always compare every metric.
    pub detail: bool,
    /// The published claims after the tables rather than above them: the
    /// verdicts are then the last thing a finished run prints.
    pub claims_last: bool,
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write the report: {0}")]
    Io(#[from] io::Error),
    #[error("cannot write the report as JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "a comparison of two runs cannot be written as {0}; it can be as {names}",
        names = comparison_format_names()
    )]
    UnsupportedForComparison(Format),
    #[error(
        "claims across machine kinds cannot be written as {0}; they can be as table, md or json"
    )]
    UnsupportedForClaims(Format),
}

fn comparison_format_names() -> String {
    let names: Vec<&str> = Format::comparison_formats().map(Format::name).collect();
    names.join(", ")
}

/// Writes one analysed run in `format`, without colour.
///
/// # Errors
/// When `out` cannot be written.
pub fn render(
    format: Format,
    analysis: &RunAnalysis,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    render_with(format, analysis, RenderOptions::default(), out)
}

/// Writes one analysed run in `format`.
///
/// # Errors
/// When `out` cannot be written.
pub fn render_with(
    format: Format,
    analysis: &RunAnalysis,
    options: RenderOptions,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    match format {
        Format::Table => table::write(&terminal_document(analysis, options), options.color, out)?,
        Format::Markdown => markdown::write(&document::run_document(analysis), out)?,
        Format::Json => json::write(analysis, out)?,
        Format::Csv => csv::write_summary(analysis, out)?,
        Format::CsvTrials => csv::write_trials(analysis, out)?,
        Format::CsvClaims => csv::write_claims(analysis, out)?,
        Format::CsvCapacity => csv::write_capacity(analysis, out)?,
        Format::CsvMemory => csv_memory::write(analysis, out)?,
        Format::GoBench => gobench::write(analysis, out)?,
        Format::Html => html::write(analysis, out)?,
    }
    out.flush()?;
    Ok(())
}

/// The run report as the terminal table lays it out.
fn terminal_document(analysis: &RunAnalysis, options: RenderOptions) -> Vec<document::Block> {
    let layout = if options.detail {
        document::ComparisonLayout::Rows
    } else {
        document::ComparisonLayout::Compact
    };
    let claims = if options.claims_last {
        document::ClaimsPlace::End
    } else {
        document::ClaimsPlace::Top
    };
    document::run_document_with(analysis, layout, claims)
}

/// Writes a comparison of two runs in `format` (table, md, json or csv).
///
/// # Errors
/// When `out` cannot be written, or `format` has no comparison form.
pub fn render_comparison(
    format: Format,
    comparison: &RunComparison,
    options: RenderOptions,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    let blocks = || document::comparison_document(comparison);
    match format {
        Format::Table => table::write(&blocks(), options.color, out)?,
        Format::Markdown => markdown::write(&blocks(), out)?,
        Format::Json => json::write(comparison, out)?,
        Format::Csv => csv::write_comparison(comparison, out)?,
        Format::CsvTrials
        | Format::CsvClaims
        | Format::CsvCapacity
        | Format::CsvMemory
        | Format::GoBench
        | Format::Html => {
            return Err(ReportError::UnsupportedForComparison(format));
        }
    }
    out.flush()?;
    Ok(())
}

/// Writes the claims of stored runs across machine kinds (`corobench
/// claims`) as a terminal table, Markdown or JSON.
///
/// # Errors
/// When `out` cannot be written, or `format` is another one.
pub fn render_claims(
    format: Format,
    evidence: &ClaimsAcrossMachines,
    options: RenderOptions,
    out: &mut dyn Write,
) -> Result<(), ReportError> {
    let blocks = || document::across::claims_document(evidence);
    match format {
        Format::Table => table::write(&blocks(), options.color, out)?,
        Format::Markdown => markdown::write(&blocks(), out)?,
        Format::Json => json::write(evidence, out)?,
        _ => return Err(ReportError::UnsupportedForClaims(format)),
    }
    out.flush()?;
    Ok(())
}
