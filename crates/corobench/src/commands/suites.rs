//! `corobench suites`: the shipped suites, each with its one-line
//! description, its size and how long it will take here, so a reader can
//! pick the published comparison to rerun.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use corobench_engine::targets::Targets;

use super::plan::TRIAL_OVERHEAD;
use super::shared::TargetsDirArg;
use crate::exit::{self, Exit};

/// Flags of `corobench suites`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench suites\n  \
    corobench run suites/single-core-plaintext.toml")]
pub struct SuitesArgs {
    /// The folder of suite files [default: suites/ beside the targets folder]
    #[arg(long, value_name = "DIR")]
    pub suites_dir: Option<PathBuf>,

    #[command(flatten)]
    pub dir: TargetsDirArg,
}

/// Runs `corobench suites`.
///
/// # Errors
/// No targets or suites folder (exit 2).
pub fn run(args: &SuitesArgs) -> anyhow::Result<Exit> {
    let mut targets = Targets::discover(args.dir.targets_dir.as_deref())?;
    let dir = args
        .suites_dir
        .clone()
        .unwrap_or_else(|| targets.dir.join("..").join("suites"));
    let dir = dir.canonicalize().unwrap_or(dir);
    let mut paths = suite_files(&dir)?;
    paths.sort();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<28} {:>9} {:>8}  DESCRIPTION",
        "SUITE", "SCENARIOS", "TIME"
    )?;
    for path in paths {
        writeln!(out, "{}", line(&mut targets, &path))?;
    }
    writeln!(
        out,
        "\nrun one with `corobench run {}/NAME.toml`; times exclude first builds and programs' own run time",
        dir.display()
    )?;
    Ok(Exit::Success)
}

fn suite_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        exit::usage(format!(
            "cannot read the suites folder {}: {e}; name it with --suites-dir",
            dir.display()
        ))
    })?;
    Ok(entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect())
}

/// `name  scenarios  time  description`, or why the suite cannot run here.
fn line(targets: &mut Targets, path: &Path) -> String {
    let name = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let plan = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            targets
                .resolve(&text, Some(path))
                .map_err(|e| e.to_string())
        });
    match plan {
        Ok(plan) => {
            // A run with a time budget measures for at most that long.
            let estimate = plan.estimated_duration(TRIAL_OVERHEAD);
            let estimate = plan.trials.budget.map_or(estimate, |b| estimate.min(b));
            // A capacity search's length is its most: it may end sooner.
            let most = if plan.capacity.is_some() { "≤ " } else { "" };
            format!(
                "{name:<28} {:>9} {:>8}  {}",
                plan.scenarios.len(),
                format!(
                    "{most}{}",
                    humantime::format_duration(Duration::from_secs(estimate.as_secs()))
                ),
                plan.description
            )
        }
        Err(why) => format!("{name:<28} {:>9} {:>8}  cannot run here: {why}", "—", "—"),
    }
}
