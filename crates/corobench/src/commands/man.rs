//! `corobench man [COMMAND]...`: the roff manual page, from the same
//! command definition as `--help`.

use std::io::Write as _;

use clap::Args;

use crate::exit::{self, Exit};

/// Flags of `corobench man`.
#[derive(Debug, Args)]
#[command(after_help = "Install, for example:
  corobench man > ~/.local/share/man/man1/corobench.1
  corobench man load > ~/.local/share/man/man1/corobench-load.1
Read without installing: corobench man | man -l -")]
pub struct ManArgs {
    /// A subcommand (e.g. `load`, or `targets build`) whose page to print
    /// instead of corobench(1); corobench(1) refers to them as
    /// corobench-load(1) and so on
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Runs `corobench man`: prints the page of `command` (the whole command
/// line's definition) or of one of its subcommands on stdout.
///
/// # Errors
/// An unknown subcommand (exit 2), or stdout cannot be written.
pub fn run(args: &ManArgs, command: clap::Command) -> anyhow::Result<Exit> {
    let page = page(command, &args.command)?;
    let mut out = std::io::stdout().lock();
    out.write_all(&page)?;
    out.flush()?;
    Ok(Exit::Success)
}

/// The manual page of `command` or of its subcommand at `path`.
///
/// # Errors
/// No subcommand at `path` (exit 2).
pub fn page(mut command: clap::Command, path: &[String]) -> anyhow::Result<Vec<u8>> {
    // Building names each subcommand as its page is called (`corobench-load`).
    command.build();
    let mut found = &command;
    for name in path {
        found = found.find_subcommand(name).ok_or_else(|| {
            let known: Vec<&str> = found
                .get_subcommands()
                .filter(|sub| !sub.is_hide_set())
                .map(clap::Command::get_name)
                .collect();
            exit::usage(format!(
                "`{}` has no subcommand {name:?}; it has: {}",
                found.get_bin_name().unwrap_or_else(|| found.get_name()),
                known.join(", ")
            ))
        })?;
    }
    let mut man = clap_mangen::Man::new(found.clone())
        .source(format!("corobench {}", env!("CARGO_PKG_VERSION")));
    // Without a date the page's header would take the source for one.
    if let Some(date) = option_env!("COROBENCH_COMMIT_DATE").filter(|d| !d.is_empty()) {
        man = man.date(date);
    }
    let mut page = Vec::new();
    man.render(&mut page)?;
    Ok(page)
}
