//! `corobench runs`: the runs stored in a results database.

use std::io::Write as _;

use clap::Args;
use corobench_engine::liveness;
use corobench_model::RunStatus;
use corobench_store::RunListing;

use super::shared::{DbArg, open_store};
use crate::exit::Exit;

/// Flags of `corobench runs`.
#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(flatten)]
    pub db: DbArg,

    /// Print the list as JSON
    #[arg(long)]
    pub json: bool,
}

/// Runs `corobench runs`.
///
/// # Errors
/// A missing or unreadable database (exit 2).
pub fn run(args: &RunsArgs) -> anyhow::Result<Exit> {
    let store = open_store(&args.db.db)?;
    let runs = store.runs()?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let rows: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.id, "suite": r.suite, "status": status(r),
                    "started_at_unix_ms": r.started_at_unix_ms, "finished_at_unix_ms": r.finished_at_unix_ms,
                    "scenarios": r.scenarios, "trials_planned": r.trials_planned,
                    "trials_ok": r.trials_ok, "trials_failed": r.trials_failed, "reason": r.reason,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
        return Ok(Exit::Success);
    }
    if runs.is_empty() {
        writeln!(
            out,
            "no runs in {} yet: start one with `corobench run`",
            args.db.db.display()
        )?;
        return Ok(Exit::Success);
    }
    writeln!(
        out,
        "{:<22} {:<14} {:<12} {:<20} {:>9} {:>18}",
        "RUN", "SUITE", "STATUS", "STARTED (UTC)", "SCENARIOS", "ok/failed/planned"
    )?;
    for r in &runs {
        writeln!(
            out,
            "{:<22} {:<14} {:<12} {:<20} {:>9} {:>8}/{}/{}",
            r.id,
            r.suite,
            status(r),
            started(r.started_at_unix_ms),
            r.scenarios,
            r.trials_ok,
            r.trials_failed,
            r.trials_planned
        )?;
        if let Some(reason) = &r.reason {
            writeln!(out, "  {}: {reason}", status(r))?;
        }
    }
    Ok(Exit::Success)
}

/// The stored status, except that a run still marked running whose process
/// is gone (killed, or the machine restarted) shows as `died`: resume it.
fn status(run: &RunListing) -> &'static str {
    let alive = run.process.as_ref().is_some_and(liveness::is_alive);
    if run.status == RunStatus::Running && !alive {
        "died"
    } else {
        run.status.as_str()
    }
}

fn started(unix_ms: i64) -> String {
    let secs = u64::try_from(unix_ms / 1000).unwrap_or(0);
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    humantime::format_rfc3339_seconds(at)
        .to_string()
        .replace('T', " ")
        .trim_end_matches('Z')
        .to_string()
}
