//! `corobench load URL`: one load run against one URL.

use clap::Args;

use crate::exit::Exit;

/// Flags of `corobench load`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The URL to load, e.g. http://127.0.0.1:8080/plaintext
    pub url: String,
}

/// Runs `corobench load`.
///
/// # Errors
/// Bad flags (exit 2), an unreachable server (exit 3).
pub fn run(args: &LoadArgs) -> anyhow::Result<Exit> {
    Err(crate::exit::usage(format!(
        "load of {} is being built",
        args.url
    )))
}
