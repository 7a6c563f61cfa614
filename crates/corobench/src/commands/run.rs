//! `corobench run [SPEC]`: every scenario of a suite, measured fairly, each
//! trial stored as it ends; `--resume RUN` finishes an interrupted run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::Context as _;
use clap::Args;
use corobench_model::{RunRecord, RunStatus, ScenarioRecord, WorkloadRecord};
use corobench_spec::{Plan, resolve};
use corobench_store::Store;

use super::shared::{ColorArg, DbArg, TargetsDirArg, read_spec};
use crate::exit::{self, Exit};
use crate::output::run_progress::run_presenter;
use crate::output::run_summary;
use crate::runner::{
    self, LocalTrials, PreparedRun, Rounds, RunEvent, RunObserver, RunTally, StoredTrials,
    provenance,
};
use crate::signals;
use crate::targets::Targets;
use crate::wall_clock::unix_ms;

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
    pub db: DbArg,

    #[command(flatten)]
    pub dir: TargetsDirArg,

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
    let targets = Targets::discover(args.dir.targets_dir.as_deref())?;
    let mut store = Store::open(&args.db.db).map_err(|e| exit::usage(e.to_string()))?;
    let (plan, run, before) = match &args.resume {
        Some(id) => resume(&store, id, &targets)?,
        None => fresh(args, &targets)?,
    };
    let observer = run_presenter(remaining_trials(&plan, &before));
    announce(&plan, &run, &before, observer.as_ref());
    let prepared = runner::prepare(&plan, &targets, Arc::clone(&stop), observer.as_ref())?;
    for excluded in &prepared.excluded {
        observer.notice(&format!(
            "excluded {}: {}",
            excluded.target, excluded.reason
        ));
    }
    if prepared.env.built.is_empty() {
        observer.on(RunEvent::Finished);
        return Err(exit::target_failed(
            "no target of this run could be built and verified; see the reasons above",
        ));
    }
    let run = if args.resume.is_none() {
        let run = with_tools(run, &prepared);
        let scenarios = scenario_records(&plan, &targets, &prepared.env.bodies)?;
        store
            .create_run(&run, plan.trials.min, &scenarios)
            .map_err(|e| exit::usage(e.to_string()))?;
        run
    } else {
        run
    };
    let tally = measure(
        &plan,
        &run.id,
        &mut store,
        &prepared,
        &before,
        observer.as_ref(),
    );
    observer.on(RunEvent::Finished);
    drop(prepared);
    finish(
        args,
        &mut store,
        &run.id,
        stop.load(Ordering::Relaxed),
        tally,
    )
}

/// Runs the trials the plan still needs, storing each as it ends.
fn measure(
    plan: &Plan,
    run_id: &str,
    store: &mut Store,
    prepared: &PreparedRun,
    before: &StoredTrials,
    observer: &dyn RunObserver,
) -> anyhow::Result<RunTally> {
    let rounds = Rounds {
        plan,
        runnable: plan
            .scenarios
            .iter()
            .filter(|s| prepared.env.built.contains_key(&s.target))
            .map(|s| s.index)
            .collect(),
        stop: &prepared.env.stop,
        observer,
    };
    let trials = LocalTrials { env: &prepared.env };
    rounds.run(&trials, before, &mut |record| {
        store
            .record_trial(run_id, record)
            .context("storing a trial")
    })
}

/// Marks the run's status, prints its table, and says how to resume it.
fn finish(
    args: &RunArgs,
    store: &mut Store,
    run_id: &str,
    stopped: bool,
    tally: anyhow::Result<RunTally>,
) -> anyhow::Result<Exit> {
    let interrupted = stopped || tally.as_ref().map_or(true, |t| t.interrupted);
    let status = if interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    let marked = store.set_run_status(run_id, status, (!interrupted).then(unix_ms));
    // A store that refused a trial is the error to report, not the status update after it.
    let tally = tally?;
    marked?;
    run_summary::print_run(
        store,
        run_id,
        args.baseline.as_deref(),
        ColorArg::Auto.enabled(None),
    )?;
    if interrupted {
        eprintln!(
            "\ninterrupted: {} trials of run {run_id} are stored; finish it with\n  corobench run --resume {run_id}{}",
            tally.stored,
            args.db.as_flag()
        );
        return Ok(Exit::Interrupted);
    }
    Ok(Exit::Success)
}

/// A new run from a spec file or the default suite, with flag overrides.
fn fresh(args: &RunArgs, targets: &Targets) -> anyhow::Result<(Plan, RunRecord, StoredTrials)> {
    let path = args.spec.as_deref();
    let text = read_spec(path)?;
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
    Ok((plan, run, StoredTrials::default()))
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
) -> anyhow::Result<(Plan, RunRecord, StoredTrials)> {
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
    let before = StoredTrials::from_records(&stored.trials);
    Ok((plan, stored.run, before))
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

fn with_tools(mut run: RunRecord, prepared: &PreparedRun) -> RunRecord {
    run.provenance.load_backend = prepared.env.backend.name().to_string();
    run.provenance
        .tool_versions
        .extend(prepared.tool_versions.clone());
    run.provenance
        .target_sources
        .extend(prepared.target_sources.clone());
    run
}

fn announce(plan: &Plan, run: &RunRecord, before: &StoredTrials, observer: &dyn RunObserver) {
    let trials = plan.scenarios.len() as u64 * u64::from(plan.trials.min);
    observer.notice(&format!(
        "run {} · suite {} · {} scenarios × {} trials = {trials} trials ({} stored) · seed {}",
        run.id,
        plan.name,
        plan.scenarios.len(),
        plan.trials.min,
        before.slots.len(),
        plan.seed
    ));
    observer.notice(&format!(
        "server on CPU {}, generator on CPU {}",
        provenance::cpu_list(&plan.server_cpus),
        provenance::cpu_list(&plan.generator_cpus)
    ));
    for skipped in &plan.skipped_targets {
        observer.notice(&format!("skipped {}: {}", skipped.target, skipped.reason));
    }
}

fn remaining_trials(plan: &Plan, before: &StoredTrials) -> u64 {
    (plan.scenarios.len() as u64 * u64::from(plan.trials.min))
        .saturating_sub(before.slots.len() as u64)
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

#[cfg(test)]
mod tests {
    #[test]
    fn run_ids_sort_by_time() {
        let id = super::new_run_id();
        assert_eq!(id.len(), "20261122-071504-3fa9".len(), "{id}");
        assert!(id.starts_with("20"), "{id}");
    }
}
