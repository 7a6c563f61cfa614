//! `corobench plan [SPEC]`: the scenarios a spec expands into, and how long
//! running them will take — without running anything. The description is
//! `corobench_report::plan`'s; the servers already running are the
//! targets folder's to tell.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use corobench_engine::targets::Targets;
use corobench_spec::{DEFAULT_SUITE, Plan};

use super::shared::{TargetsDirArg, read_spec};
use crate::exit::Exit;

/// Start-up, health check and stop of one target, as observed on a 2-core
/// machine; used only for the estimate.
pub(crate) const TRIAL_OVERHEAD: Duration = Duration::from_millis(800);

/// Flags of `corobench plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Spec file (TOML) [default: the embedded default suite]
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,

    #[command(flatten)]
    pub dir: TargetsDirArg,

    /// Print the default suite's TOML (a starting point for your own spec)
    #[arg(long, conflicts_with = "spec")]
    pub print_default: bool,
}

/// Runs `corobench plan`.
///
/// # Errors
/// A spec that does not resolve (exit 2).
pub fn run(args: &PlanArgs) -> anyhow::Result<Exit> {
    let mut out = std::io::stdout().lock();
    if args.print_default {
        write!(out, "{DEFAULT_SUITE}")?;
        return Ok(Exit::Success);
    }
    let mut targets = Targets::discover(args.dir.targets_dir.as_deref())?;
    let path = args.spec.as_deref();
    let text = read_spec(path)?;
    let plan = targets.resolve(&text, path)?;
    write!(
        out,
        "{}",
        corobench_report::plan::render(&plan, TRIAL_OVERHEAD)
    )?;
    write!(out, "{}", already_running_lines(&plan, &targets))?;
    Ok(Exit::Success)
}

/// The servers measured where they already run: no trial starts them.
fn already_running_lines(plan: &Plan, targets: &Targets) -> String {
    let names: BTreeSet<&str> = plan.scenarios.iter().map(|s| s.target.as_str()).collect();
    names
        .into_iter()
        .filter_map(|name| targets.get(name)?.attach.as_ref().map(|a| (name, a)))
        .map(|(name, attachment)| {
            format!(
                "  {name}: already running at {}, measured where it is (never started, \
                 restarted or stopped)\n",
                attachment.url
            )
        })
        .collect()
}
