//! `corobench compare RUN_A RUN_B`: two stored runs, scenario by scenario,
//! benchstat-style: run A is the baseline, each metric gets a table with a
//! geomean row, and scenarios only one run has are listed. With
//! `--fail-on`, a regression gate for CI: exit 1 when run B is
//! significantly worse than run A beyond a threshold.

use std::path::PathBuf;

use clap::Args;
use corobench_model::{Metric, RunComparison};
use corobench_report::{Format, RenderOptions};

use super::format_arg::CompareFormat;
use super::shared::{StatsArgs, load_run, open_store, write_output};
use crate::exit::{Exit, usage};
use corobench_analyze::{self as analyze, gate};

/// Flags of `corobench compare`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench compare 20261122-0633 latest\n  \
    corobench compare old-run new-run --format md -o comparison.md\n  \
    corobench compare old-run new-run --metrics rps,p99\n  \
    corobench compare base head --fail-on \"rps:-5%,p99:+10%\" --format junit -o gate.xml")]
pub struct CompareArgs {
    /// The baseline run: its id, a unique prefix of it, or `latest`
    #[arg(value_name = "RUN_A")]
    pub run_a: String,

    /// The run compared with it
    #[arg(value_name = "RUN_B")]
    pub run_b: String,

    /// Output format
    #[arg(short = 'f', long, value_enum, default_value_t = CompareFormat::Comparison(Format::Table))]
    pub format: CompareFormat,

    /// Write the comparison to this file instead of stdout
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Exit 1 when a metric of a scenario is significantly worse in RUN_B
    /// beyond a threshold: comma-separated METRIC:±PERCENT%, the sign being
    /// the direction that is worse (rps:-5% fails on a drop of more than
    /// 5%, p99:+10% on a rise of more than 10%). Metrics: rps (or req/s),
    /// mean, p50, p99, p99.9, cpu, rss, error_rate, program:UNIT
    #[arg(long, value_name = "RULES")]
    pub fail_on: Option<String>,

    /// Show only these metrics' tables, comma-separated: rps,p99 (the
    /// words of --fail-on, or the labels the tables print: req/s, CPU)
    #[arg(long, value_name = "METRICS", value_delimiter = ',')]
    pub metrics: Vec<String>,

    #[command(flatten)]
    pub stats: StatsArgs,
}

/// Runs `corobench compare`.
///
/// # Errors
/// A missing database or an unknown run id (exit 2, naming the
/// candidates), a `--fail-on` that does not parse or a gate format without
/// it (exit 2), a database that cannot be read or an output that cannot be
/// written.
pub fn run(args: &CompareArgs) -> anyhow::Result<Exit> {
    let rules = args
        .fail_on
        .as_deref()
        .map(gate::parse_rules)
        .transpose()
        .map_err(|error| crate::commands::hints::fail_on(&error))?;
    if let (None, CompareFormat::Gate(format)) = (&rules, args.format) {
        return Err(usage(format!(
            "--format {} writes the regression gate's verdicts: add --fail-on, e.g. --fail-on \"{}\"",
            format.name(),
            gate::EXAMPLE
        )));
    }
    let store = open_store(&args.stats.db.db)?;
    let a = load_run(&store, &args.run_a)?;
    let b = load_run(&store, &args.run_b)?;
    let options = args.stats.analyze_options();
    let mut comparison = analyze::compare_runs_gated(&a, &b, &options, rules.as_deref());
    rules_matched(&comparison)?;
    if let Some(metrics) = shown_metrics(&args.metrics)? {
        let absent: Vec<String> = metrics
            .iter()
            .filter(|m| !comparison.tables.iter().any(|t| t.metric == **m))
            .map(|m| format!("`{}`", gate::metric_word(*m)))
            .collect();
        if !absent.is_empty() {
            let measured: Vec<String> = comparison
                .tables
                .iter()
                .map(|t| gate::metric_word(t.metric))
                .collect();
            return Err(usage(format!(
                "--metrics: {} measured by neither run; they have: {}",
                absent.join(", "),
                measured.join(", ")
            )));
        }
        comparison.keep_metrics(&metrics);
    }
    let render = RenderOptions {
        color: args.stats.color.enabled(args.output.as_deref()),
        ..RenderOptions::default()
    };
    write_output(args.output.as_deref(), |out| match args.format {
        CompareFormat::Comparison(format) => {
            corobench_report::render_comparison(format, &comparison, render, out)
        }
        CompareFormat::Gate(format) => Ok(corobench_report::render_gate(format, &comparison, out)?),
    })?;
    Ok(gate_exit(&comparison))
}

/// The metrics `--metrics` names, `None` without the flag.
fn shown_metrics(names: &[String]) -> anyhow::Result<Option<Vec<Metric>>> {
    if names.is_empty() {
        return Ok(None);
    }
    let metrics = names
        .iter()
        .map(|name| {
            Metric::from_name(name.trim()).ok_or_else(|| {
                usage(format!(
                    "--metrics: unknown metric `{}`; use {} (or the label a table prints, e.g. \
                     req/s) or program:UNIT",
                    name.trim(),
                    Metric::words().join(", ")
                ))
            })
        })
        .collect::<anyhow::Result<Vec<Metric>>>()?;
    Ok(Some(metrics))
}

/// A rule that matches no metric of the scenarios both runs measured (a
/// misspelt program unit, a metric neither run has) is an error, not a
/// pass. With no scenario in common the gate judges nothing and fails.
fn rules_matched(comparison: &RunComparison) -> anyhow::Result<()> {
    let Some(gate) = comparison.gate.as_ref().filter(|g| g.scenarios > 0) else {
        return Ok(());
    };
    let unmatched: Vec<String> = gate
        .unmatched_rules()
        .map(|rule| format!("`{}`", rule.text))
        .collect();
    if unmatched.is_empty() {
        return Ok(());
    }
    let measured: Vec<String> = comparison
        .tables
        .iter()
        .map(|t| gate::metric_word(t.metric))
        .collect();
    Err(usage(format!(
        "--fail-on: {} matches no metric of the {} scenarios both runs measured; \
         they have: {}",
        unmatched.join(", "),
        gate.scenarios,
        measured.join(", ")
    )))
}

/// With a gate: its offenders and verdict on stderr, exit 1 when it failed.
fn gate_exit(comparison: &RunComparison) -> Exit {
    let Some(gate) = &comparison.gate else {
        return Exit::Success;
    };
    eprint!("{}", corobench_report::gate_summary(gate));
    if gate.passed() {
        Exit::Success
    } else {
        Exit::CheckFailed
    }
}
