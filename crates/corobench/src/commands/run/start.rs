//! Where a run starts from: a spec (a fresh run) or a stored run that was
//! interrupted (`--resume`). Everything that can be known before the first
//! trial is checked here, before anything is built or stored.

use std::path::Path;

use corobench_engine::targets::Targets;
use corobench_engine::wall_clock::unix_ms;
use corobench_engine::{
    EngineError, PreparedRun, RateScenario, StoredTrials, liveness, provenance,
};
use corobench_model::{RunRecord, RunStatus, TrialRecord};
use corobench_spec::{DEFAULT_BUDGET_GOAL, MIN_TRIALS_FOR_INTERVAL, Plan};
use corobench_store::Store;

use super::RunArgs;
use crate::commands::shared::read_spec;
use crate::exit;

/// A run about to be measured.
#[derive(Debug)]
pub(super) struct Start {
    pub(super) plan: Plan,
    pub(super) run: RunRecord,
    /// Trials a resumed run already holds.
    pub(super) before: StoredTrials,
    /// The same trials in full: a capacity search judges them again.
    pub(super) records: Vec<TrialRecord>,
    /// Scenarios a resumed capacity run added for the rates it tried.
    pub(super) added: Vec<RateScenario>,
    /// The run is not in the store yet.
    pub(super) fresh: bool,
}

/// A new run from a spec file or the default suite, with flag overrides.
/// `cluster`: the run's hosts are a cluster's pods, whose image carries
/// the targets ([`Targets::resolve_for_cluster`]).
pub(super) fn fresh(args: &RunArgs, targets: &mut Targets, cluster: bool) -> anyhow::Result<Start> {
    let path = args.spec.as_deref();
    let text = read_spec(path)?;
    let mut plan = resolve(targets, &text, path, cluster)?;
    apply_overrides(&mut plan, args)?;
    check_baseline(&plan, args.baseline.as_deref())?;
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
        claims: plan.claims.clone(),
        baseline: run_baseline(&plan, args.baseline.as_deref()),
        capacity: plan.capacity.clone(),
        precision_goal: plan.trials.goal(),
    };
    Ok(Start {
        plan,
        run,
        before: StoredTrials::default(),
        records: Vec::new(),
        added: Vec::new(),
        fresh: true,
    })
}

/// The spec resolved for this machine, or for a cluster's pods.
fn resolve(
    targets: &mut Targets,
    text: &str,
    path: Option<&Path>,
    cluster: bool,
) -> Result<corobench_spec::Plan, EngineError> {
    if cluster {
        targets.resolve_for_cluster(text, path)
    } else {
        targets.resolve(text, path)
    }
}

/// The flags that override the spec; a maximum below the minimum is refused
/// rather than silently raised.
fn apply_overrides(plan: &mut Plan, args: &RunArgs) -> anyhow::Result<()> {
    refuse_ignored_flags(plan, args)?;
    if let Some(trials) = args.trials {
        plan.trials.min = trials;
        plan.trials.max = plan.trials.max.max(trials);
    }
    if let Some(width) = args.until_ci {
        plan.trials.until_ci = Some(width);
    }
    if let Some(budget) = args.budget {
        if budget.is_zero() {
            return Err(exit::usage("--budget must be longer than 0, e.g. 5m"));
        }
        // As in a spec: a budget needs a goal and bounded intervals.
        plan.trials.budget = Some(budget);
        let goal = plan.trials.until_ci.unwrap_or(DEFAULT_BUDGET_GOAL);
        plan.trials.until_ci = Some(goal);
        plan.trials.min = plan.trials.min.max(MIN_TRIALS_FOR_INTERVAL);
        plan.trials.max = plan.trials.max.max(plan.trials.min);
    }
    if let Some(max) = args.max_trials {
        if max < plan.trials.min {
            return Err(exit::usage(format!(
                "--max-trials {max} is below the {} trials every scenario gets; raise it, \
                 or lower --trials",
                plan.trials.min
            )));
        }
        if plan.trials.until_ci.is_none() {
            return Err(exit::usage(format!(
                "--max-trials {max} bounds the trials --until-ci or --budget add, and this run \
                 has neither: add one, or give a fixed count with --trials"
            )));
        }
        plan.trials.max = max;
    }
    if let Some(seed) = args.seed {
        plan.seed = seed;
    }
    Ok(())
}

/// A capacity search gives each rate `trials_per_rate` trials: the flags
/// that set how many trials a scenario gets would be ignored, so they are
/// refused rather than shown in the run's header as if they applied.
fn refuse_ignored_flags(plan: &Plan, args: &RunArgs) -> anyhow::Result<()> {
    let Some(capacity) = &plan.capacity else {
        return Ok(());
    };
    let given = [
        ("--trials", args.trials.is_some()),
        ("--until-ci", args.until_ci.is_some()),
        ("--budget", args.budget.is_some()),
        ("--max-trials", args.max_trials.is_some()),
    ];
    let Some((flag, _)) = given.iter().find(|(_, set)| *set) else {
        return Ok(());
    };
    Err(exit::usage(format!(
        "{flag} does not apply to a capacity search: each rate gets capacity.trials_per_rate \
         ({}) trials; remove {flag}, or set trials_per_rate in the spec",
        capacity.trials_per_rate
    )))
}

/// `--baseline` must name a target the run measures: found out after the
/// whole run, it would cost every trial.
fn check_baseline(plan: &Plan, baseline: Option<&str>) -> anyhow::Result<()> {
    let Some(name) = baseline else {
        return Ok(());
    };
    let mut measured: Vec<&str> = plan.scenarios.iter().map(|s| s.target.as_str()).collect();
    measured.sort_unstable();
    measured.dedup();
    if measured.contains(&name) {
        return Ok(());
    }
    Err(exit::usage(format!(
        "--baseline {name}: this run measures no target of that name; use one of: {}",
        measured.join(", ")
    )))
}

/// The target the run's tables compare with, stored so that its reports
/// compare alike: `--baseline`, else the spec's `baseline` when it is
/// measured here (a skipped one leaves the first target).
fn run_baseline(plan: &Plan, flag: Option<&str>) -> Option<String> {
    flag.map(str::to_owned).or_else(|| {
        let spec = plan.baseline.as_ref()?;
        plan.scenarios
            .iter()
            .any(|s| &s.target == spec)
            .then(|| spec.clone())
    })
}

fn check_runnable(plan: &Plan) -> anyhow::Result<()> {
    if !plan.scenarios.is_empty() {
        return Ok(());
    }
    // A target left out of every scenario for a protocol it does not serve
    // is said as such: nothing would otherwise say why nothing runs.
    let reasons: Vec<String> = plan
        .skipped_targets
        .iter()
        .map(|s| format!("{}: {}", s.target, s.reason))
        .chain(
            plan.skipped_protocols
                .iter()
                .map(corobench_spec::SkippedProtocol::line),
        )
        .collect();
    Err(exit::target_failed(format!(
        "no target of this spec can run here:\n  {}",
        reasons.join("\n  ")
    )))
}

/// A stored run, its plan re-resolved from the stored spec, and what it holds.
pub(super) fn resume(
    store: &Store,
    id: &str,
    targets: &mut Targets,
    cluster: bool,
) -> anyhow::Result<Start> {
    let id = store.resolve_run_id(id)?;
    let stored = store.load_run(&id)?;
    if matches!(stored.run.status, RunStatus::Complete | RunStatus::Failed) {
        return Err(exit::usage(format!(
            "run {id} is already {}; see `corobench report {id}`",
            stored.run.status
        )));
    }
    refuse_live(store, &id)?;
    let path = stored.run.provenance.spec_path.as_deref().map(Path::new);
    let mut plan = resolve(targets, &stored.run.spec_toml, path, cluster)
        .map_err(|e| exit::usage(format!("run {id}'s spec no longer resolves: {e}")))?;
    plan.seed = stored.run.seed;
    plan.trials.min = stored.trials_per_scenario;
    plan.trials.max = plan.trials.max.max(plan.trials.min);
    let planned: Vec<&str> = plan.scenarios.iter().map(|s| s.key.as_str()).collect();
    let mut recorded: Vec<&str> = stored.scenarios.iter().map(|s| s.key.as_str()).collect();
    // A capacity run adds a scenario for every rate it tries, after the plan's own.
    let added = match plan.capacity {
        Some(_) => {
            let extra = stored.scenarios.get(planned.len()..).unwrap_or_default();
            recorded.truncate(planned.len());
            corobench_engine::run::added_scenarios(&plan, extra)
                .map_err(|why| exit::usage(format!("run {id} cannot be resumed: {why}")))?
        }
        None => Vec::new(),
    };
    if planned != recorded {
        return Err(exit::usage(format!(
            "run {id} cannot be resumed: its scenarios changed since it started (a target became unavailable, \
             or the targets folder differs); stored: {}; now: {}",
            recorded.join(", "),
            planned.join(", ")
        )));
    }
    let before = StoredTrials::from_records(&stored.trials);
    Ok(Start {
        plan,
        run: stored.run,
        before,
        records: stored.trials,
        added,
        fresh: false,
    })
}

/// A resumed run must measure the programs its stored trials measured: a
/// server whose executable (by its SHA-256) or command changed since would
/// put two programs' trials in one scenario. What changed, with both
/// values; `None` when nothing did.
pub(super) fn changed_server(run: &RunRecord, prepared: &PreparedRun) -> Option<String> {
    let stored = &run.provenance.tool_versions;
    prepared.tool_versions.iter().find_map(|(key, now)| {
        let identifies = key.ends_with(" executable") || key.ends_with(" command");
        let before = stored.get(key).filter(|before| *before != now)?;
        identifies.then(|| {
            format!(
                "the {key} changed since its trials were measured (stored: {before}; now: {now})"
            )
        })
    })
}

/// The refusal of a resume whose server changed (`change`), with the ways
/// out: the old program back, or a new run.
pub(super) fn refuse_changed(run: &RunRecord, change: &str) -> anyhow::Error {
    let spec = run.provenance.spec_path.as_deref().unwrap_or("SPEC");
    exit::usage(format!(
        "run {} cannot be resumed: {change}, so its new trials would measure another \
         program; put the old one back to finish it, or measure the new one in a run of its \
         own: corobench run {spec} (or add --new-run-if-changed to this --resume to start \
         that run now)",
        run.id
    ))
}

impl Start {
    /// This resumed run's plan as a new run: a new id, none of the stored
    /// trials, the provenance of now (keeping the spec's path and the
    /// hosts). The stored run stays as it was.
    pub(super) fn become_new_run(&mut self) {
        let old = &mut self.run.provenance;
        let mut provenance = provenance::collect(&self.plan.server_cpus, &self.plan.generator_cpus);
        provenance.spec_path = old.spec_path.take();
        provenance.hosts = std::mem::take(&mut old.hosts);
        self.run.provenance = provenance;
        self.run.id = new_run_id();
        self.run.started_at_unix_ms = unix_ms();
        self.run.finished_at_unix_ms = None;
        self.run.status = RunStatus::Running;
        self.before = StoredTrials::default();
        self.records.clear();
        self.added.clear();
        self.fresh = true;
    }
}

/// A run that another corobench is still measuring cannot be resumed: both
/// would measure on the same CPUs at once.
fn refuse_live(store: &Store, id: &str) -> anyhow::Result<()> {
    let process = store.run_process(id)?;
    match process.filter(liveness::is_alive) {
        Some(live) => Err(exit::usage(format!(
            "run {id} is still being measured by corobench process {}; wait for it, or stop \
             it (kill -INT {}) and resume then",
            live.pid, live.pid
        ))),
        None => Ok(()),
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

#[cfg(test)]
mod tests {
    #[test]
    fn run_ids_sort_by_time() {
        let id = super::new_run_id();
        assert_eq!(id.len(), "20261122-071504-3fa9".len(), "{id}");
        assert!(id.starts_with("20"), "{id}");
    }
}
