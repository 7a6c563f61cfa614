//! `corobench compare RUN_A RUN_B`: two stored runs, scenario by scenario,
//! benchstat-style: run A is the baseline, each metric gets a table with a
//! geomean row, and scenarios only one run has are listed.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use corobench_report::{Format, RenderOptions};

use super::shared::{StatsArgs, load_run, open_store, write_output};
use crate::analyze;
use crate::exit::Exit;

/// Flags of `corobench compare`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench compare 20261122-0633 latest\n  \
    corobench compare old-run new-run --format md -o comparison.md")]
pub struct CompareArgs {
    /// The baseline run: its id, a unique prefix of it, or `latest`
    #[arg(value_name = "RUN_A")]
    pub run_a: String,

    /// The run compared with it
    #[arg(value_name = "RUN_B")]
    pub run_b: String,

    /// Output format
    #[arg(short = 'f', long, value_enum, default_value_t = CompareFormatArg::Table)]
    pub format: CompareFormatArg,

    /// Write the comparison to this file instead of stdout
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub stats: StatsArgs,
}

/// `--format` values of `corobench compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompareFormatArg {
    /// Aligned columns for a terminal
    Table,
    /// Markdown tables
    #[value(alias = "markdown")]
    Md,
    /// Everything as JSON (docs/schema/report.schema.json)
    Json,
    /// One row per metric × scenario
    Csv,
}

impl From<CompareFormatArg> for Format {
    fn from(arg: CompareFormatArg) -> Self {
        match arg {
            CompareFormatArg::Table => Self::Table,
            CompareFormatArg::Md => Self::Markdown,
            CompareFormatArg::Json => Self::Json,
            CompareFormatArg::Csv => Self::Csv,
        }
    }
}

/// Runs `corobench compare`.
///
/// # Errors
/// A missing database or an unknown run id (exit 2, naming the
/// candidates), a database that cannot be read or an output that cannot be
/// written.
pub fn run(args: &CompareArgs) -> anyhow::Result<Exit> {
    let store = open_store(&args.stats.db.db)?;
    let a = load_run(&store, &args.run_a)?;
    let b = load_run(&store, &args.run_b)?;
    let comparison = analyze::compare_runs(&a, &b, &args.stats.analyze_options());
    let render = RenderOptions {
        color: args.stats.color.enabled(args.output.as_deref()),
        ..RenderOptions::default()
    };
    write_output(args.output.as_deref(), |out| {
        corobench_report::render_comparison(args.format.into(), &comparison, render, out)
    })?;
    Ok(Exit::Success)
}
