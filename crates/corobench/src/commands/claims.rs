//! `corobench claims`: every published claim of the stored runs with its
//! verdict on each machine kind that ran its suite (the newest complete
//! run of each kind, judged as `corobench report` judges it), and what
//! the verdicts come to across kinds.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use corobench_analyze::{self as analyze, AnalyzeOptions};
use corobench_model::RunAnalysis;
use corobench_report::{Format, RenderOptions};
use corobench_store::Store;

use super::shared::{StatsArgs, load_run, open_store, write_output};
use crate::exit::{Exit, usage};

/// Flags of `corobench claims`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench import results/*/*.json.gz --db all.db && corobench claims --db all.db\n  \
    corobench claims --suite single-core-plaintext --format md\n  \
    corobench claims --format json | jq '.suites[].claims[] | select(.differs) | .summary'")]
pub struct ClaimsArgs {
    /// Only this suite's claims (repeatable)
    #[arg(long = "suite", value_name = "SUITE")]
    pub suites: Vec<String>,

    /// Output format
    #[arg(short = 'f', long, value_enum, default_value_t = ClaimsFormatArg::Table)]
    pub format: ClaimsFormatArg,

    /// Write to this file instead of stdout
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub stats: StatsArgs,
}

/// `--format` values of `corobench claims`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ClaimsFormatArg {
    /// One record per claim, for a terminal
    Table,
    /// Markdown tables
    #[value(alias = "markdown")]
    Md,
    /// Everything as JSON, each kind's verdict in full
    Json,
}

impl From<ClaimsFormatArg> for Format {
    fn from(arg: ClaimsFormatArg) -> Self {
        match arg {
            ClaimsFormatArg::Table => Self::Table,
            ClaimsFormatArg::Md => Self::Markdown,
            ClaimsFormatArg::Json => Self::Json,
        }
    }
}

/// Runs `corobench claims`.
///
/// # Errors
/// A missing database, a suite with no complete run (exit 2), a database
/// that cannot be read or an output that cannot be written.
pub fn run(args: &ClaimsArgs) -> anyhow::Result<Exit> {
    let store = open_store(&args.stats.db.db)?;
    let analyses = newest_per_machine(&store, &args.suites, &args.stats.analyze_options())?;
    let evidence = analyze::claims_across_machines(&analyses);
    let render = RenderOptions {
        color: args.stats.color.enabled(args.output.as_deref()),
        ..RenderOptions::default()
    };
    write_output(args.output.as_deref(), |out| {
        corobench_report::render_claims(args.format.into(), &evidence, render, out)
    })?;
    Ok(Exit::Success)
}

/// The newest complete run of each suite on each machine kind, analysed;
/// only `suites`' when any are named, each of which must have one.
///
/// # Errors
/// A named suite without a complete run (exit 2), or a run that cannot be
/// read or analysed.
pub fn newest_per_machine(
    store: &Store,
    suites: &[String],
    options: &AnalyzeOptions,
) -> anyhow::Result<Vec<RunAnalysis>> {
    let records = store.run_records()?;
    let chosen: Vec<_> = analyze::newest_per_machine(&records)
        .into_iter()
        .filter(|r| suites.is_empty() || suites.contains(&r.suite))
        .collect();
    if let Some(absent) = suites
        .iter()
        .find(|s| !chosen.iter().any(|r| r.suite == **s))
    {
        let mut known: Vec<&str> = analyze::newest_per_machine(&records)
            .iter()
            .map(|r| r.suite.as_str())
            .collect();
        known.dedup();
        return Err(usage(format!(
            "--suite {absent}: {} holds no complete run of it; suites with one: {}",
            store.path().display(),
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        )));
    }
    chosen
        .iter()
        .map(|record| {
            let stored = load_run(store, &record.id)?;
            Ok(analyze::analyze_run(&stored, options)?)
        })
        .collect()
}
