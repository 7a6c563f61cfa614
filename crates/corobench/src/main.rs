use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = corobench::cli::Cli::parse();
    // Targets' grandchildren that outlive their parents are reparented to
    // us and reaped, instead of piling up as zombies under an init that does
    // not reap (as in many containers).
    if let Err(error) = corobench_target::install_child_reaper() {
        eprintln!("warning: orphaned target processes may linger as zombies: {error}");
    }
    corobench::exit::report(corobench::run(cli), corobench::commands::hints::hint)
}
