//! `corobench report RUN`: one stored run, analysed, in any output format.

use std::path::PathBuf;

use clap::Args;
use corobench_report::{Format, RenderOptions};

use super::format_arg::ReportFormat;
use super::shared::{StatsArgs, load_run, open_store, write_output};
use crate::exit::Exit;
use corobench_analyze::{self as analyze, AnalyzeOptions};

/// Flags of `corobench report`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench report                              the latest run, as a table\n  \
    corobench report 20261122 --baseline go-ants  compare every target with go-ants\n  \
    corobench report latest --detail              compare every metric, not only req/s and p99\n  \
    corobench report latest --format html -o report.html\n  \
    corobench report latest --flamegraph go-nethttp/plaintext/c=64 -o flame.svg\n  \
    corobench report latest --format gobench > run.txt && benchstat -col /target run.txt")]
pub struct ReportArgs {
    /// The run: its id, a unique prefix of it, or `latest`
    #[arg(value_name = "RUN", default_value = "latest")]
    pub run: String,

    /// Output format
    #[arg(short = 'f', long, value_enum, default_value_t = ReportFormat(Format::Table))]
    pub format: ReportFormat,

    /// Write the report to this file instead of stdout
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Compare every target with this one [default: the run's baseline, else its first target]
    #[arg(long, value_name = "TARGET")]
    pub baseline: Option<String>,

    /// The table compares every metric with the baseline, not only req/s and p99
    #[arg(long)]
    pub detail: bool,

    /// Instead of a report, write this scenario's flame graph (SVG) from the
    /// profile `run --profile` stored; SCENARIO is its key as reports show it
    #[arg(long, value_name = "SCENARIO", conflicts_with_all = ["format", "detail", "baseline"])]
    pub flamegraph: Option<String>,

    /// Scale each trial's req/s by the median machine-speed probe ÷ its own
    /// probe before summarising (docs/methodology.md)
    #[arg(long, alias = "normalize-by-probe")]
    pub normalise_by_probe: bool,

    #[command(flatten)]
    pub stats: StatsArgs,
}

/// Runs `corobench report`.
///
/// # Errors
/// A missing database or unknown run (exit 2), an unknown baseline target
/// (exit 2), a database that cannot be read or an output that cannot be written.
pub fn run(args: &ReportArgs) -> anyhow::Result<Exit> {
    let store = open_store(&args.stats.db.db)?;
    let stored = load_run(&store, &args.run)?;
    if let Some(key) = &args.flamegraph {
        super::flamegraph::write(&stored, key, args.output.as_deref())?;
        return Ok(Exit::Success);
    }
    if args.normalise_by_probe && stored.trials.iter().all(|t| t.probe.is_none()) {
        return Err(crate::exit::usage(format!(
            "--normalise-by-probe: run {} has no machine-speed probe (it ran with --no-probe or \
             machine_probe = false, on [hosts], or before corobench probed the machine); report \
             it without the flag",
            stored.run.id
        )));
    }
    let options = AnalyzeOptions {
        baseline: args.baseline.clone(),
        normalise_by_probe: args.normalise_by_probe,
        ..args.stats.analyze_options()
    };
    let analysis =
        analyze::analyze_run(&stored, &options).map_err(crate::commands::hints::analysis)?;
    let render = RenderOptions {
        color: args.stats.color.enabled(args.output.as_deref()),
        detail: args.detail,
        claims_last: false,
    };
    write_output(args.output.as_deref(), |out| {
        corobench_report::render_with(args.format.0, &analysis, render, out)
    })?;
    Ok(Exit::Success)
}
