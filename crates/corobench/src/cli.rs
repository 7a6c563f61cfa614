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
pub enum Command {
    /// Send HTTP load to one URL and report throughput, latency and errors.
    Load(commands::load::LoadArgs),
}
