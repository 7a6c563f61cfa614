//! `corobench run [SPEC]`: every scenario of a suite, measured fairly, each
//! trial stored as it ends; `--resume RUN` finishes an interrupted run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use clap::Args;
use corobench_model::{RunRecord, RunStatus, ScenarioRecord, WorkloadRecord};
use corobench_spec::{DEFAULT_SUITE, Plan, resolve};
use corobench_store::Store;

use crate::exit::{self, Exit};
use crate::runner::progress::RunProgress;
use crate::runner::targets::Targets;
use crate::runner::{self, Completed, provenance};
use crate::{signals, summary};

/// Flags of `corobench run`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench run                          the default suite\n  \
    corobench run suites/ants-sweep.toml --trials 10\n  \
    corobench run my.toml --until-ci 3% --max-trials 30\n  \
    corobench run --resume latest          finish an interrupted run")]
pub struct RunArgs {
    /// Spec file (TOML, see docs/spec.md) [default: the embedded default suite]
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,

    /// Finish a stored run that was interrupted, without repeating its trials
    #[arg(long, value_name = "RUN", conflicts_with = "spec")]
    pub resume: Option<String>,

    #[command(flatten)]
    pub common: CommonArgs,

    /// Trials per scenario (overrides the spec)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub trials: Option<u32>,

    /// Keep adding trials to a scenario until its req/s interval is within
    /// this much of its median, e.g. 3% (overrides the spec)
    #[arg(long, value_name = "PERCENT", value_parser = corobench_spec::parse_fraction)]
    pub until_ci: Option<f64>,

    /// Upper bound on trials per scenario for --until-ci
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_trials: Option<u32>,

    /// Seed of the trial order (overrides the spec)
    #[arg(long)]
    pub seed: Option<u64>,

    /// Compare every target with this one in the summary [default: the first]
    #[arg(long, value_name = "TARGET")]
    pub baseline: Option<String>,
}

/// Where results live and where targets come from; shared by several commands.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// The results database
    #[arg(long, value_name = "PATH", default_value = "corobench.db")]
    pub db: PathBuf,

    /// The folder holding one folder per target [default: ./targets or $COROBENCH_TARGETS]
    #[arg(long, value_name = "DIR")]
    pub targets_dir: Option<PathBuf>,
}

/// Runs `corobench run`.
///
/// # Errors
/// A bad spec or flag (exit 2), no target that can be measured (exit 3), a
/// store that refuses a trial (completed trials are kept).
pub fn run(args: &RunArgs) -> anyhow::Result<Exit> {
    let stop = signals::stop_flag()?;
    corobench_target::install_child_reaper().map_err(|e| {
        anyhow::anyhow!("cannot become the reaper of targets' orphaned processes: {e}")
    })?;
    let targets = Targets::discover(args.common.targets_dir.as_deref())?;
    let mut store = Store::open(&args.common.db).map_err(|e| exit::usage(e.to_string()))?;
    let (plan, mut run, completed) = match &args.resume {
        Some(id) => resume(&store, id, &targets)?,
        None => fresh(args, &targets)?,
    };
    let show = RunProgress::new(remaining_trials(&plan, &completed));
    announce(&plan, &run, &completed, &show);
    let prepared = runner::prepare(&plan, &targets, Arc::clone(&stop), &show)?;
    for (target, why) in &prepared.excluded {
        show.say(&format!("excluded {target}: {why}"));
    }
    if prepared.bench.built.is_empty() {
        show.finish();
        return Err(exit::target_failed(
            "no target of this run could be built and verified; see the reasons above",
        ));
    }
    if args.resume.is_none() {
        run = with_tools(run, &prepared);
        store
            .create_run(
                &run,
                plan.trials.min,
                &scenario_records(&plan, &targets, &prepared.bench.bodies)?,
            )
            .map_err(|e| exit::usage(e.to_string()))?;
    }
    let executed = runner::execute(&plan, &run.id, &mut store, &prepared, &completed, &show);
    show.finish();
    drop(prepared);
    let interrupted =
        stop.load(Ordering::Relaxed) || executed.as_ref().map_or(true, |e| e.interrupted);
    let status = if interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    let marked = store.set_run_status(&run.id, status, (!interrupted).then(unix_ms));
    // A store that refused a trial is the error to report, not the status update after it.
    let executed = executed?;
    marked?;
    summary::print_run(&store, &run.id, args.baseline.as_deref())?;
    if interrupted {
        eprintln!(
            "\ninterrupted: {} trials of run {} are stored; finish it with\n  corobench run --resume {}{}",
            executed.stored,
            run.id,
            run.id,
            db_flag(&args.common.db)
        );
        return Ok(Exit::Interrupted);
    }
    Ok(Exit::Success)
}

/// A new run from a spec file or the default suite, with flag overrides.
fn fresh(args: &RunArgs, targets: &Targets) -> anyhow::Result<(Plan, RunRecord, Completed)> {
    let (text, path) = match &args.spec {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                exit::usage(format!("cannot read the spec {}: {e}", path.display()))
            })?;
            (text, Some(path.as_path()))
        }
        None => (DEFAULT_SUITE.to_string(), None),
    };
    let mut plan =
        resolve(&text, path, &targets.catalog()).map_err(|e| exit::usage(e.to_string()))?;
    apply_overrides(&mut plan, args);
    check_runnable(&plan)?;
    let mut provenance = provenance::collect(&plan.server_cpus, &plan.generator_cpus);
    provenance.spec_path = path
        .and_then(|p| p.canonicalize().ok())
        .map(|p| p.display().to_string());
    let run = RunRecord {
        id: new_run_id(),
        started_at_unix_ms: unix_ms(),
        finished_at_unix_ms: None,
        status: RunStatus::Running,
        suite: plan.name.clone(),
        spec_toml: text,
        seed: plan.seed,
        provenance,
    };
    Ok((plan, run, Completed::default()))
}

fn apply_overrides(plan: &mut Plan, args: &RunArgs) {
    if let Some(trials) = args.trials {
        plan.trials.min = trials;
        plan.trials.max = plan.trials.max.max(trials);
    }
    if let Some(width) = args.until_ci {
        plan.trials.until_ci = Some(width);
    }
    if let Some(max) = args.max_trials {
        plan.trials.max = max.max(plan.trials.min);
    }
    if let Some(seed) = args.seed {
        plan.seed = seed;
    }
}

fn check_runnable(plan: &Plan) -> anyhow::Result<()> {
    if !plan.scenarios.is_empty() {
        return Ok(());
    }
    let reasons: Vec<String> = plan
        .skipped_targets
        .iter()
        .map(|s| format!("{}: {}", s.target, s.reason))
        .collect();
    Err(exit::target_failed(format!(
        "no target of this spec can run here:\n  {}",
        reasons.join("\n  ")
    )))
}

/// A stored run, its plan re-resolved from the stored spec, and what it holds.
fn resume(
    store: &Store,
    id: &str,
    targets: &Targets,
) -> anyhow::Result<(Plan, RunRecord, Completed)> {
    let id = store
        .resolve_run_id(id)
        .map_err(|e| exit::usage(e.to_string()))?;
    let stored = store
        .load_run(&id)
        .map_err(|e| exit::usage(e.to_string()))?;
    if stored.run.status == RunStatus::Complete {
        return Err(exit::usage(format!(
            "run {id} is already complete; see `corobench report {id}`"
        )));
    }
    let path = stored.run.provenance.spec_path.as_deref().map(Path::new);
    let mut plan = resolve(&stored.run.spec_toml, path, &targets.catalog())
        .map_err(|e| exit::usage(format!("run {id}'s spec no longer resolves: {e}")))?;
    plan.seed = stored.run.seed;
    plan.trials.min = stored.trials_per_scenario;
    plan.trials.max = plan.trials.max.max(plan.trials.min);
    let planned: Vec<&str> = plan.scenarios.iter().map(|s| s.key.as_str()).collect();
    let recorded: Vec<&str> = stored.scenarios.iter().map(|s| s.key.as_str()).collect();
    if planned != recorded {
        return Err(exit::usage(format!(
            "run {id} cannot be resumed: its scenarios changed since it started (a target became unavailable, \
             or the targets folder differs); stored: {}; now: {}",
            recorded.join(", "),
            planned.join(", ")
        )));
    }
    let completed = Completed::from_trials(&stored.trials);
    Ok((plan, stored.run, completed))
}

/// The scenario records stored with the run: every parameter, defaults
/// included, and the size of the body each request carries.
fn scenario_records(
    plan: &Plan,
    targets: &Targets,
    bodies: &BTreeMap<String, Vec<u8>>,
) -> anyhow::Result<Vec<ScenarioRecord>> {
    plan.scenarios
        .iter()
        .map(|s| {
            Ok(ScenarioRecord {
                index: s.index,
                key: s.key.clone(),
                target: s.target.clone(),
                parameters: targets.parameters(&s.target, &s.parameters)?,
                workload: WorkloadRecord {
                    name: s.workload.name.clone(),
                    method: s.workload.method.clone(),
                    path: s.workload.path.clone(),
                    body_bytes: bodies
                        .get(&s.workload.name)
                        .map_or(0, |body| body.len() as u64),
                },
                schedule: s.schedule.kind,
                connections: s.schedule.connections,
                warmup_s: s.measurement.warmup.as_secs_f64(),
                duration_s: s.measurement.duration.as_secs_f64(),
            })
        })
        .collect()
}

fn with_tools(mut run: RunRecord, prepared: &runner::Prepared) -> RunRecord {
    run.provenance.load_backend = prepared.bench.backend.name().to_string();
    run.provenance
        .tool_versions
        .extend(prepared.tool_versions.clone());
    run.provenance
        .target_sources
        .extend(prepared.target_sources.clone());
    run
}

fn announce(plan: &Plan, run: &RunRecord, completed: &Completed, show: &RunProgress) {
    let trials = plan.scenarios.len() as u64 * u64::from(plan.trials.min);
    show.say(&format!(
        "run {} · suite {} · {} scenarios × {} trials = {trials} trials ({} stored) · seed {}",
        run.id,
        plan.name,
        plan.scenarios.len(),
        plan.trials.min,
        completed.slots.len(),
        plan.seed
    ));
    show.say(&format!(
        "server on CPU {}, generator on CPU {}",
        provenance::cpu_list(&plan.server_cpus),
        provenance::cpu_list(&plan.generator_cpus)
    ));
    for skipped in &plan.skipped_targets {
        show.say(&format!("skipped {}: {}", skipped.target, skipped.reason));
    }
}

fn remaining_trials(plan: &Plan, completed: &Completed) -> u64 {
    (plan.scenarios.len() as u64 * u64::from(plan.trials.min))
        .saturating_sub(completed.slots.len() as u64)
}

fn db_flag(db: &Path) -> String {
    if db == Path::new("corobench.db") {
        String::new()
    } else {
        format!(" --db {}", db.display())
    }
}

/// `20261122-071504-3fa9`: sortable, and unique enough on one machine.
fn new_run_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let stamp = humantime::format_rfc3339_seconds(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(now.as_secs()),
    )
    .to_string();
    let digits: String = stamp.chars().filter(char::is_ascii_digit).collect();
    let (date, time) = digits.split_at(8.min(digits.len()));
    format!(
        "{date}-{time}-{:04x}",
        (now.subsec_nanos() ^ std::process::id()) & 0xffff
    )
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    #[test]
    fn run_ids_sort_by_time() {
        let id = super::new_run_id();
        assert_eq!(id.len(), "20261122-071504-3fa9".len(), "{id}");
        assert!(id.starts_with("20"), "{id}");
    }
}
