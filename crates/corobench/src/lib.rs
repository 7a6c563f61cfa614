//! The `corobench` command: glue between the CLI and the library crates.
//! Only this crate sees every other crate, and only it prints.

pub mod cli;
pub mod commands;
pub mod exit;
pub mod output;
pub mod signals;
pub mod values;

use clap::CommandFactory as _;
use cli::{Cli, Command};
use exit::Exit;

/// Runs one parsed command line; the caller turns the result into an exit status.
///
/// # Errors
/// Any failure, carrying its exit status as an [`exit::Failure`] where one applies.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Load(args) => commands::load::run(&args),
        Command::Merge(args) => commands::merge::run(&args),
        Command::Serve(args) => commands::serve::run(&args),
        Command::Program(args) => commands::program::run(&args),
        Command::Verify(args) => commands::verify::run(&args),
        Command::Targets(args) => commands::targets::run(&args),
        Command::K8s(args) => commands::k8s::run(&args),
        Command::Plan(args) => commands::plan::run(&args),
        Command::Suites(args) => commands::suites::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Bench(args) => commands::bench::run(&args),
        Command::Runs(args) => commands::runs::run(&args),
        Command::Report(args) => commands::report::run(&args),
        Command::Compare(args) => commands::compare::run(&args),
        Command::Export(args) => commands::export::run(&args),
        Command::Import(args) => commands::import::run(&args),
        Command::Claims(args) => commands::claims::run(&args),
        Command::Pages(args) => commands::pages::run(&args),
        Command::Completions(args) => commands::completions::run(&args, Cli::command()),
        Command::Man(args) => commands::man::run(&args, Cli::command()),
    }
}
