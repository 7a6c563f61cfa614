//! `corobench run [SPEC]`: every scenario of a suite, measured fairly, each
//! trial stored as it ends; `--resume RUN` finishes an interrupted run.

mod finish;
mod place;
mod start;

pub use place::{HostMaker, MadeHosts};

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use corobench_engine::run::{RunParts, scenario_records, with_tools};
use corobench_engine::scratch;
use corobench_engine::targets::Targets;
use corobench_engine::{PreparedRun, RunEvent, RunObserver, StoredTrials, liveness, provenance};
use corobench_model::RunStatus;
use corobench_spec::Plan;
use corobench_store::Store;

use self::start::Start;
use super::shared::{self, DbArg, TargetsDirArg};
use crate::exit::{self, Exit};
use crate::output::run_progress::{TrialsAhead, run_presenter};
use crate::signals;

/// Flags of `corobench run`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench run                          the default suite\n  \
    corobench run suites/ants-sweep.toml --trials 10\n  \
    corobench run my.toml --until-ci 3% --max-trials 30\n  \
    corobench run --budget 10m             the default suite, for at most 10 minutes\n  \
    corobench run --resume latest          finish an interrupted run\n  \
    corobench run --resume latest --new-run-if-changed\n                                         \
    the same, or a new run if a server changed")]
pub struct RunArgs {
    /// Spec file (TOML, see docs/spec.md) [default: the embedded default suite]
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,

    /// Finish a stored run that was interrupted, without repeating its trials
    #[arg(long, value_name = "RUN", conflicts_with = "spec")]
    pub resume: Option<String>,

    /// With --resume: when a server's executable or command changed since
    /// the run's trials, measure the run's spec in a new run (its id is
    /// said) instead of refusing the resume; the old run is left as it was
    #[arg(long, requires = "resume", conflicts_with = "spec")]
    pub new_run_if_changed: bool,

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

    /// Measure for at most this long (e.g. 5m): after the first rounds, each
    /// further trial goes to the scenario whose req/s interval is widest,
    /// until all are within --until-ci (default 5%) (overrides the spec)
    #[arg(long, value_name = "DURATION", value_parser = corobench_spec::parse_duration)]
    pub budget: Option<std::time::Duration>,

    /// Upper bound on trials per scenario for --until-ci and --budget
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_trials: Option<u32>,

    /// Seed of the trial order (overrides the spec)
    #[arg(long)]
    pub seed: Option<u64>,

    /// Compare every target with this one in the summary [default: the first]
    #[arg(long, value_name = "TARGET")]
    pub baseline: Option<String>,

    /// After the measured trials, profile each scenario's server in one extra
    /// trial with `perf record` (its figures are not kept); `corobench report
    /// --format html` draws the flame graphs (same as `[run] profile = true`)
    #[arg(long)]
    pub profile: bool,
    /// Skip the machine-speed probe (a fixed SHA-256 job of about 0.1 s on
    /// the server and generator CPUs) before each trial (overrides the spec)
    #[arg(long)]
    pub no_probe: bool,

    /// Plain progress lines instead of the live view (the view shows only
    /// when stdout and stderr are terminals)
    #[arg(long)]
    pub no_tui: bool,
}

/// Runs `corobench run`.
///
/// # Errors
/// A bad spec or flag (exit 2), no target that can be measured (exit 3), a
/// run in which every trial failed (exit 1), a store that refuses a trial
/// (completed trials are kept).
pub fn run(args: &RunArgs) -> anyhow::Result<Exit> {
    run_on(args, signals::stop_flag()?, None)
}

/// Runs `corobench run` with `stop` as the user's Ctrl-C, on the hosts
/// `maker` makes when one is given (`corobench k8s run`'s pods).
///
/// # Errors
/// As [`run`], and hosts that cannot be made.
pub fn run_on(
    args: &RunArgs,
    stop: Arc<AtomicBool>,
    mut maker: Option<&mut dyn HostMaker>,
) -> anyhow::Result<Exit> {
    corobench_target::install_child_reaper().map_err(|e| {
        anyhow::anyhow!("cannot become the reaper of targets' orphaned processes: {e}")
    })?;
    scratch::check_temp_dir()?;
    let mut targets = Targets::discover(args.dir.targets_dir.as_deref())?;
    let cluster = maker.is_some();
    // A fresh run's spec is resolved before the store is opened: a spec
    // that does not resolve leaves no database file behind.
    let mut start = match &args.resume {
        // A resume reads a database that must exist and be corobench's.
        Some(id) => start::resume(&shared::open_store(&args.db.db)?, id, &mut targets, cluster)?,
        None => start::fresh(args, &mut targets, cluster)?,
    };
    place::refuse_both(&start.plan, maker.as_deref())?;
    start.plan.profile |= args.profile;
    targets.refuse_fresh_only(&start.plan)?;
    refuse_profile_elsewhere(&start.plan, cluster)?;
    // A resumed run may skip the probe too: the flag is not part of the spec.
    start.plan.machine_probe &= !args.no_probe;
    let mut store = open_store(args)?;
    let observer = run_presenter(trials_ahead(&start), args.no_tui);
    announce(&start, observer.as_ref());
    // Until a fresh run is stored, the id just announced names nothing.
    let note = (start.fresh).then(|| format!("nothing measured; run {} not stored", start.run.id));
    let unstored = |e: anyhow::Error| note.iter().fold(e, |e, note| e.context(note.clone()));

    let _cpus = (start.plan.hosts.is_none() && !cluster)
        .then(|| corobench_engine::cpu_claim::claim(&start.plan, observer.as_ref()));
    let resume_with = maker.as_ref().map_or("corobench run", |m| m.command());
    let hosts = place::ready_hosts(&mut start.plan, maker.take(), &stop, observer.as_ref())
        .map_err(&unstored)?;
    let prepared = match &hosts {
        Some(ready) => {
            start.run.provenance.hosts.clone_from(&ready.provenance);
            corobench_engine::prepare_for_hosts(&start.plan, Arc::clone(&stop), observer.as_ref())
        }
        None => {
            corobench_engine::prepare(&start.plan, &targets, Arc::clone(&stop), observer.as_ref())
        }
    }
    .map_err(|e| unstored(e.into()))?;
    for excluded in &prepared.excluded {
        observer.notice(&format!(
            "excluded {}: {}",
            excluded.target, excluded.reason
        ));
    }
    if prepared.env.built.is_empty() && hosts.is_none() {
        observer.on(RunEvent::Finished);
        return Err(unstored(exit::target_failed(
            "no target of this run could be built and verified; see the reasons above",
        )));
    }
    let observer = restart_if_changed(&mut start, &prepared, args, observer)?;
    let run_id = record_start(&mut store, &start, &targets, &prepared).map_err(&unstored)?;
    let parts = RunParts {
        plan: &start.plan,
        run_id: &run_id,
        before: &start.before,
        records: &start.records,
        added: &start.added,
        targets: &targets,
        prepared: &prepared,
        hosts: hosts.as_ref(),
    };
    let tally = corobench_engine::run::measure(&parts, &mut store, observer.as_ref());
    observer.on(RunEvent::Finished);
    drop(prepared);
    let stopped = stop.load(Ordering::Relaxed);
    finish::finish(args, &mut store, (&run_id, resume_with), stopped, tally)
}

/// Profiles and idle trials (`idle_connections`) measure a server on this
/// machine, in the trials of a fixed plan: a capacity search or a run on
/// `[hosts]` has neither.
fn refuse_profile_elsewhere(plan: &Plan, cluster: bool) -> anyhow::Result<()> {
    let place = match (&plan.hosts, &plan.capacity) {
        _ if cluster => "on Kubernetes pods",
        (Some(_), _) => "on [hosts]",
        (None, Some(_)) => "that searches [capacity]",
        (None, None) => return Ok(()),
    };
    let what = if plan.profile {
        "`[run] profile` (--profile)"
    } else if plan.scenarios.iter().any(|s| s.workload.idle) {
        "an idle workload (idle_connections)"
    } else {
        return Ok(());
    };
    Err(exit::usage(format!(
        "{what} is not available in a run {place}: it measures a server on this machine; \
         measure it in a run of its own"
    )))
}

/// A resumed run whose server changed since its trials is refused, or, with
/// `--new-run-if-changed`, becomes a new run of the same spec: said, with
/// its id, by a presenter of its own trials.
fn restart_if_changed(
    start: &mut Start,
    prepared: &PreparedRun,
    args: &RunArgs,
    observer: Box<dyn RunObserver>,
) -> anyhow::Result<Box<dyn RunObserver>> {
    if start.fresh {
        return Ok(observer);
    }
    let Some(change) = start::changed_server(&start.run, prepared) else {
        return Ok(observer);
    };
    if !args.new_run_if_changed {
        return Err(start::refuse_changed(&start.run, &change));
    }
    let old = start.run.id.clone();
    start.become_new_run();
    drop(observer);
    let observer = run_presenter(trials_ahead(start), args.no_tui);
    observer.notice(&format!(
        "run {old} is not resumed: {change}; its spec is measured in a new run, {}, instead \
         (--new-run-if-changed); run {old} is left as it was",
        start.run.id
    ));
    announce(start, observer.as_ref());
    Ok(observer)
}

/// The trials `start` has ahead, for its presenter.
fn trials_ahead(start: &Start) -> TrialsAhead<'_> {
    TrialsAhead {
        scenarios: &start.plan.scenarios,
        per_scenario: planned_per_scenario(&start.plan),
        before: &start.before,
        remaining: remaining_trials(&start.plan, &start.before),
    }
}

fn open_store(args: &RunArgs) -> anyhow::Result<Store> {
    Store::open(&args.db.db).map_err(anyhow::Error::from)
}

/// Stores a fresh run with its scenarios, and records this process as the
/// one measuring it (a second `--resume` of it is then refused).
fn record_start(
    store: &mut Store,
    start: &Start,
    targets: &Targets,
    prepared: &PreparedRun,
) -> anyhow::Result<String> {
    let run_id = start.run.id.clone();
    if start.fresh {
        let run = with_tools(start.run.clone(), prepared);
        let scenarios = scenario_records(&start.plan, targets, &prepared.env.bodies)?;
        store.create_run(&run, planned_per_scenario(&start.plan), &scenarios)?;
    } else {
        store.set_run_status(&run_id, RunStatus::Running, None)?;
        // A resumed run may be on other hosts (new pods): they are kept too.
        store.add_run_hosts(&run_id, &start.run.provenance.hosts)?;
    }
    store.set_run_process(&run_id, liveness::this_process())?;
    Ok(run_id)
}

/// How many trials the run plans, as its header says it: a capacity
/// search's trials per rate, not the `[run]` trials it does not use.
fn trials_text(plan: &Plan) -> String {
    let scenarios = plan.scenarios.len();
    let per_scenario = planned_per_scenario(plan);
    if plan.capacity.is_some() {
        return format!(
            "{scenarios} capacity searches × {per_scenario} trials per rate, rates added as \
             the search goes"
        );
    }
    let trials = scenarios as u64 * u64::from(per_scenario);
    format!("{scenarios} scenarios × {per_scenario} trials = {trials} trials")
}

fn announce(start: &Start, observer: &dyn RunObserver) {
    let (plan, run, before) = (&start.plan, &start.run, &start.before);
    observer.notice(&format!(
        "run {} · suite {} · {} ({} stored) · seed {}",
        run.id,
        plan.name,
        trials_text(plan),
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
    for line in plan
        .skipped_protocols
        .iter()
        .map(corobench_spec::SkippedProtocol::line)
    {
        observer.notice(&line);
    }
}

/// Trials each scenario is planned to get: a capacity search's trials per
/// rate (each rate is a scenario), or the plan's minimum.
fn planned_per_scenario(plan: &Plan) -> u32 {
    plan.capacity
        .as_ref()
        .map_or(plan.trials.min, |c| c.trials_per_rate)
}

fn remaining_trials(plan: &Plan, before: &StoredTrials) -> u64 {
    // A capacity search adds trials as it adds rates; it starts with one rate.
    (plan.scenarios.len() as u64 * u64::from(planned_per_scenario(plan)))
        .saturating_sub(before.slots.len() as u64)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use corobench_spec::{Catalog, CatalogTarget, resolve};

    use super::trials_text;

    /// Issue "wrong successes", item 13: a capacity run's header showed the
    /// `[run]` trials that its search does not use.
    #[test]
    fn a_capacity_run_s_header_counts_trials_per_rate() {
        let catalog = Catalog {
            targets: vec![CatalogTarget {
                name: "fast".to_owned(),
                available: Ok(()),
                parameters: BTreeMap::new(),
                min_warmup: std::time::Duration::ZERO,
                program: None,
                unserved: std::collections::BTreeMap::new(),
            }],
            cpus: 2,
        };
        let base = "targets = [\"fast\"]\n[run]\ntrials = 7\n\
                    [[workloads]]\nname = \"json\"\npath = \"/json\"\n";
        let fixed = resolve(base, None, &catalog).unwrap();
        assert_eq!(trials_text(&fixed), "1 scenarios × 7 trials = 7 trials");
        let search = format!("{base}[capacity]\nslo = \"p99 <= 10ms\"\ntrials_per_rate = 3\n");
        let search = resolve(&search, None, &catalog).unwrap();
        assert_eq!(
            trials_text(&search),
            "1 capacity searches × 3 trials per rate, rates added as the search goes"
        );
    }
}
