//! The command line: one `Command` variant per subcommand; each subcommand's
//! flags live beside its implementation in `commands/`.

use clap::{Parser, Subcommand};

use crate::commands;

/// corobench measures HTTP servers built on different concurrency models,
/// fairly, and tells you which differences are real.
#[derive(Debug, Parser)]
#[command(name = "corobench", version, about, long_about = None)]
#[command(propagate_version = true, arg_required_else_help = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process: size does not matter
pub enum Command {
    /// Send HTTP load to one URL and report throughput, latency and errors.
    Load(commands::load::LoadArgs),
    /// Merge the load reports of several generators into one, exactly.
    Merge(commands::merge::MergeArgs),
    /// Build and start targets and check every rule of the HTTP contract.
    Verify(commands::verify::VerifyArgs),
    /// Build, start and verify one target here, stream its resource use, stop it when stdin closes.
    Serve(commands::serve::ServeArgs),
    /// Build and run one program target here to the end and print its figures as JSON.
    Program(commands::program::ProgramArgs),
    /// Lay a spec's trials out on Kubernetes: write the manifests, or run them with kubectl.
    K8s(commands::k8s::K8sArgs),
    /// Show the scenarios a spec expands into and how long they will take.
    Plan(commands::plan::PlanArgs),
    /// List the shipped suites: the published comparisons, with their size and time.
    Suites(commands::suites::SuitesArgs),
    /// Measure every scenario of a suite (the default suite when none is given).
    Run(commands::run::RunArgs),
    /// Compare your own servers, given as commands, on one request: a run in one line.
    Bench(commands::bench::BenchArgs),
    /// List the runs stored in a results database.
    Runs(commands::runs::RunsArgs),
    /// Analyse a stored run: medians, intervals, comparisons, charts.
    Report(commands::report::ReportArgs),
    /// Compare two stored runs scenario by scenario, benchstat-style.
    Compare(commands::compare::CompareArgs),
    /// Write stored runs to one portable file, for another machine or a repository.
    Export(commands::export::ExportArgs),
    /// Store the runs of run files or of another machine's results database.
    Import(commands::import::ImportArgs),
    /// List every published claim with its verdict on each machine kind that ran it.
    Claims(commands::claims::ClaimsArgs),
    /// Write the results pages of the stored runs: a page per suite, per machine kind.
    Pages(commands::pages::PagesArgs),
    /// List the targets and build them into the cache.
    Targets(commands::targets::TargetsArgs),
    /// Print the completion script for a shell.
    Completions(commands::completions::CompletionsArgs),
    /// Print the manual page (roff), of corobench or of one subcommand.
    Man(commands::man::ManArgs),
}
