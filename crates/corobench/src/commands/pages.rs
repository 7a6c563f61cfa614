//! `corobench pages -o DIR [SUITE…]`: the results pages of the stored
//! runs. For each suite, `SUITE.md` (its claims across machine kinds above
//! each kind's report) and `SUITE.KIND.html` (each kind's HTML report);
//! `README.md`, the index of every suite and claim with one column per
//! machine kind; with `--runs-table`, the table of which suite has runs
//! from which kind. Every figure comes from the same analysis `corobench
//! report` makes.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Args;
use corobench_analyze::{self as analyze, AnalyzeOptions};
use corobench_model::{ClaimsAcrossMachines, RunAnalysis};
use corobench_report::{Format, MachineReport};

use super::claims::newest_per_machine;
use super::shared::{DbArg, open_store, write_output};
use crate::exit::{Exit, usage};

/// Flags of `corobench pages`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench pages -o site/ --db all.db\n  \
    corobench pages -o docs/results single-core-plaintext php-fpm-vs-go-json --runs-table \
    results/README.md")]
pub struct PagesArgs {
    /// The suites to write pages for, in the index's order [default: every
    /// suite with a complete run]; a suite without any run is listed as missing
    #[arg(value_name = "SUITE")]
    pub suites: Vec<String>,

    /// The folder to write the pages into (created when missing)
    #[arg(short = 'o', long, value_name = "DIR")]
    pub output: PathBuf,

    /// Also write the table of runs by suite and machine kind (Markdown) to this file
    #[arg(long, value_name = "FILE")]
    pub runs_table: Option<PathBuf>,

    #[command(flatten)]
    pub db: DbArg,
}

/// Runs `corobench pages`.
///
/// # Errors
/// A missing database (exit 2), a folder that cannot be created, a run
/// that cannot be read or a page that cannot be written.
pub fn run(args: &PagesArgs) -> anyhow::Result<Exit> {
    let store = open_store(&args.db.db)?;
    let options = AnalyzeOptions::default();
    let analyses: Vec<RunAnalysis> = newest_per_machine(&store, &[], &options)?
        .into_iter()
        .filter(|a| args.suites.is_empty() || args.suites.contains(&a.run.suite))
        .collect();
    let evidence = analyze::claims_across_machines(&analyses);
    fs::create_dir_all(&args.output).map_err(|e| {
        usage(format!(
            "cannot create -o {}: {e}; check that its parent is writable",
            args.output.display()
        ))
    })?;
    for suite in &evidence.suites {
        let reports: Vec<MachineReport<'_>> = suite
            .runs
            .iter()
            .map(|run| MachineReport {
                run,
                analysis: analysis_of(&analyses, &run.run_id),
            })
            .collect();
        let page = args
            .output
            .join(corobench_report::suite_page_name(&suite.suite));
        write_output(Some(&page), |out| {
            corobench_report::write_suite_page(suite, &reports, out)
        })?;
        for report in &reports {
            let name = corobench_report::html_page_name(&suite.suite, &report.run.machine);
            write_output(Some(&args.output.join(name)), |out| {
                corobench_report::render(Format::Html, report.analysis, out)
            })?;
        }
    }
    let suites = expected(&evidence, &args.suites);
    write_output(Some(&args.output.join("README.md")), |out| {
        corobench_report::write_results_index(&evidence, &suites, out)
    })?;
    if let Some(table) = &args.runs_table {
        write_output(Some(table), |out| {
            corobench_report::write_runs_table(&evidence, &suites, out)
        })?;
    }
    eprintln!("{}", written(&evidence, &args.output));
    Ok(Exit::Success)
}

fn analysis_of<'a>(analyses: &'a [RunAnalysis], run_id: &str) -> &'a RunAnalysis {
    analyses
        .iter()
        .find(|a| a.run.id == run_id)
        .expect("every run of the evidence was analysed")
}

/// The suites named, or every suite with a run.
fn expected(evidence: &ClaimsAcrossMachines, named: &[String]) -> Vec<String> {
    if named.is_empty() {
        evidence.suites.iter().map(|s| s.suite.clone()).collect()
    } else {
        named.to_vec()
    }
}

/// `pages: 12 suites from 15 runs on 1 machine kind in docs/results`.
fn written(evidence: &ClaimsAcrossMachines, dir: &Path) -> String {
    let runs: usize = evidence.suites.iter().map(|s| s.runs.len()).sum();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "pages: {} from {} on {} in {}",
        plural(evidence.suites.len(), "suite"),
        plural(runs, "run"),
        plural(evidence.machines.len(), "machine kind"),
        dir.display()
    )
}
