use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = corobench::cli::Cli::parse();
    corobench::exit::report(corobench::run(cli))
}
