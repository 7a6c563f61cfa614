//! `corobench completions SHELL`: the shell completion script, from the
//! same command definition as `--help`.

use std::io::Write as _;

use clap::Args;
use clap_complete::Shell;

use crate::exit::Exit;

/// Flags of `corobench completions`.
#[derive(Debug, Args)]
#[command(after_help = "Install, for example:
  bash  corobench completions bash > ~/.local/share/bash-completion/completions/corobench
  zsh   corobench completions zsh > ~/.zfunc/_corobench   (with fpath+=~/.zfunc before compinit)
  fish  corobench completions fish > ~/.config/fish/completions/corobench.fish")]
pub struct CompletionsArgs {
    /// The shell to complete in
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Runs `corobench completions`: prints the script of `command` (the
/// whole command line's definition) on stdout.
///
/// # Errors
/// Stdout cannot be written.
pub fn run(args: &CompletionsArgs, command: clap::Command) -> anyhow::Result<Exit> {
    let script = script(args.shell, command);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Exit::Success)
}

/// The completion script for `shell`. It is generated into memory, which
/// cannot fail, and written out by the caller, so a closed stdout is an
/// error to report rather than a panic inside the generator.
#[must_use]
pub fn script(shell: Shell, mut command: clap::Command) -> Vec<u8> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "corobench", &mut script);
    script
}
