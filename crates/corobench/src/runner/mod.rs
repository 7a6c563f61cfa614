//! The experiment runner: prepares everything a run needs once (builds,
//! payload, PostgreSQL, one verification per target), then runs the trials
//! round by round in a seeded order, storing each trial as it ends.

pub mod gate;
pub mod leak;
pub mod order;
pub mod progress;
pub mod provenance;
mod stats_probe;
pub mod targets;
pub mod trial;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use corobench_model::BackendChoice;
use corobench_spec::{Body, Plan};
use corobench_store::Store;
use corobench_target::{BuildCache, BuiltTarget, CpuSet, Postgres, ensure_payload};

use self::order::TrialSlot;
use self::progress::RunProgress;
use self::targets::Targets;
use self::trial::TrialOutcome;
use crate::exit;

/// What every trial of a run shares.
#[derive(Debug)]
pub struct Bench {
    pub built: BTreeMap<String, BuiltTarget>,
    pub data_dir: PathBuf,
    /// A scratch folder for this run (uploads, logs of failed targets).
    pub work_root: PathBuf,
    pub database_url: Option<String>,
    /// Request bodies, by workload name, read once.
    pub bodies: BTreeMap<String, Vec<u8>>,
    pub server_cpus: CpuSet,
    pub generator_cpus: Vec<usize>,
    /// The generator's CPUs, where corobench's own helpers (the sampler) run too.
    pub generator_set: CpuSet,
    /// The generator's event loop, `auto` resolved once for the whole run.
    pub backend: corobench_load::Backend,
    pub stop: Arc<AtomicBool>,
}

/// A run ready to go: the bench, PostgreSQL if it runs, and what was left out.
#[derive(Debug)]
pub struct Prepared {
    pub bench: Bench,
    pub postgres: Option<Postgres>,
    /// Targets left out, with the reason (a failed build or verification).
    pub excluded: Vec<(String, String)>,
    pub tool_versions: BTreeMap<String, String>,
    pub target_sources: BTreeMap<String, String>,
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if let Some(postgres) = self.postgres.take() {
            let _ = postgres.stop();
        }
        let _ = std::fs::remove_dir_all(&self.bench.work_root);
    }
}

/// Builds, starts PostgreSQL if a workload reads the database, and verifies
/// each target once. Targets that fail are excluded, not fatal.
///
/// # Errors
/// Unusable CPU sets, cache or scratch folders, unreadable bodies, or
/// PostgreSQL failing when the plan needs it.
pub fn prepare(
    plan: &Plan,
    targets: &Targets,
    stop: Arc<AtomicBool>,
    show: &RunProgress,
) -> anyhow::Result<Prepared> {
    let server_cpus = cpu_set(&plan.server_cpus)?;
    let generator_set = cpu_set(&plan.generator_cpus)?;
    let work_root = std::env::temp_dir().join(format!("corobench-run-{}", std::process::id()));
    std::fs::create_dir_all(&work_root)
        .with_context(|| format!("creating {}", work_root.display()))?;
    let cache = BuildCache::from_env().map_err(|e| exit::usage(e.to_string()))?;
    let data_dir = cache.root().join("data");
    ensure_payload(&data_dir).context("writing the payload /file serves")?;
    let bench = Bench {
        built: BTreeMap::new(),
        data_dir,
        work_root,
        database_url: None,
        bodies: bodies(plan)?,
        server_cpus: server_cpus.clone(),
        generator_cpus: plan.generator_cpus.clone(),
        generator_set,
        backend: resolve_backend(plan, show),
        stop,
    };
    let mut prepared = Prepared {
        bench,
        postgres: None,
        excluded: Vec::new(),
        tool_versions: BTreeMap::new(),
        target_sources: BTreeMap::new(),
    };
    build_all(plan, targets, &cache, &mut prepared, show);
    if plan.scenarios.iter().any(|s| s.needs_database) {
        show.note("starting PostgreSQL");
        let postgres = start_postgres(&prepared.bench.work_root, &server_cpus)?;
        prepared.bench.database_url = Some(postgres.url());
        prepared.postgres = Some(postgres);
    }
    gate::verify_all(plan, &mut prepared, show);
    Ok(prepared)
}

/// Starts PostgreSQL on the server's CPUs (it is server-side work; the
/// generator's CPUs must stay quiet), then restores this thread's CPUs.
fn start_postgres(work_root: &std::path::Path, server_cpus: &CpuSet) -> anyhow::Result<Postgres> {
    let original = CpuSet::allowed().map_err(|e| exit::usage(e.to_string()))?;
    server_cpus
        .apply_to_current_thread()
        .map_err(|e| exit::usage(e.to_string()))?;
    let started = Postgres::start(work_root);
    original
        .apply_to_current_thread()
        .map_err(|e| exit::usage(e.to_string()))?;
    started.map_err(|e| {
        exit::target_failed(format!(
            "PostgreSQL did not start, and the plan has /db workloads: {e}"
        ))
    })
}

/// The spec's backend for this run; `auto` is io_uring where the kernel allows it.
fn resolve_backend(plan: &Plan, show: &RunProgress) -> corobench_load::Backend {
    let choice = plan
        .scenarios
        .first()
        .map_or(BackendChoice::Auto, |s| s.measurement.backend);
    let (backend, passed_over) = corobench_load::resolve_backend(choice);
    if let Some(why) = passed_over {
        show.say(&format!(
            "note: using the epoll backend: io_uring is not usable here ({why})"
        ));
    }
    backend
}

fn cpu_set(cpus: &[usize]) -> anyhow::Result<CpuSet> {
    let set = CpuSet::parse(&provenance::cpu_list(cpus)).map_err(|e| exit::usage(e.to_string()))?;
    set.validate().map_err(|e| exit::usage(e.to_string()))?;
    Ok(set)
}

fn bodies(plan: &Plan) -> anyhow::Result<BTreeMap<String, Vec<u8>>> {
    let mut bodies = BTreeMap::new();
    for scenario in &plan.scenarios {
        let workload = &scenario.workload;
        let body = match &workload.body {
            Body::Empty => continue,
            Body::Text(text) => text.clone().into_bytes(),
            Body::File(path) => std::fs::read(path).map_err(|e| {
                exit::usage(format!(
                    "cannot read the body of workload {}: {}: {e}",
                    workload.name,
                    path.display()
                ))
            })?,
        };
        bodies.insert(workload.name.clone(), body);
    }
    Ok(bodies)
}

fn build_all(
    plan: &Plan,
    targets: &Targets,
    cache: &BuildCache,
    prepared: &mut Prepared,
    show: &RunProgress,
) {
    let names: BTreeSet<&str> = plan.scenarios.iter().map(|s| s.target.as_str()).collect();
    for name in names {
        let Some(manifest) = targets.get(name) else {
            continue;
        };
        show.note(&format!("building {name}"));
        let log = prepared.bench.work_root.join(format!("build-{name}.log"));
        match cache.build(manifest, &log) {
            Ok(built) => {
                prepared
                    .target_sources
                    .insert(name.to_string(), built.source_hash.clone());
                prepared.tool_versions.extend(manifest.tool_versions());
                prepared.bench.built.insert(name.to_string(), built);
            }
            Err(error) => prepared
                .excluded
                .push((name.to_string(), format!("build failed: {error}"))),
        }
    }
}

/// Trials a run already has (a resumed run), so they are neither repeated
/// nor forgotten by the adaptive stop.
#[derive(Debug, Default)]
pub struct Completed {
    pub slots: BTreeSet<TrialSlot>,
    /// req/s of the successful ones, by scenario.
    pub req_per_s: BTreeMap<u32, Vec<f64>>,
}

impl Completed {
    /// What a stored run already holds.
    #[must_use]
    pub fn from_trials(trials: &[corobench_model::TrialRecord]) -> Self {
        let mut completed = Self::default();
        for trial in trials {
            completed
                .slots
                .insert((trial.scenario_index, trial.trial_index));
            if let Some(load) = &trial.load {
                completed
                    .req_per_s
                    .entry(trial.scenario_index)
                    .or_default()
                    .push(load.requests_per_s);
            }
        }
        completed
    }
}

/// How the trials went.
#[derive(Debug, Default)]
pub struct Executed {
    pub stored: u32,
    pub failed: u32,
    pub interrupted: bool,
}

/// Runs every trial the plan still needs, storing each as it ends.
///
/// # Errors
/// The store refused a trial (disk full, ...): the run stops, what was
/// stored is kept.
pub fn execute(
    plan: &Plan,
    run_id: &str,
    store: &mut Store,
    prepared: &Prepared,
    before: &Completed,
    show: &RunProgress,
) -> anyhow::Result<Executed> {
    let bench = &prepared.bench;
    let done = &before.slots;
    let runnable: Vec<u32> = plan
        .scenarios
        .iter()
        .filter(|s| bench.built.contains_key(&s.target))
        .map(|s| s.index)
        .collect();
    let mut req_per_s = before.req_per_s.clone();
    let mut executed = Executed::default();
    let mut sequence = u32::try_from(done.len()).unwrap_or(u32::MAX);
    let mut round = 0;
    let mut scenarios = runnable.clone();
    while !scenarios.is_empty() && round < plan.trials.max {
        for slot in order::round(&scenarios, round, plan.seed, done) {
            if bench.stop.load(Ordering::Relaxed) {
                executed.interrupted = true;
                return Ok(executed);
            }
            let scenario = &plan.scenarios[slot.0 as usize];
            show.begin_trial(scenario, slot.1);
            match trial::run(bench, scenario, slot, sequence, &|phase| show.phase(phase)) {
                TrialOutcome::Interrupted => {
                    executed.interrupted = true;
                    return Ok(executed);
                }
                TrialOutcome::Done(record) => {
                    store
                        .record_trial(run_id, &record)
                        .context("storing a trial")?;
                    show.end_trial(scenario, &record);
                    executed.stored += 1;
                    sequence += 1;
                    if let Some(load) = record.load.as_ref() {
                        req_per_s
                            .entry(slot.0)
                            .or_default()
                            .push(load.requests_per_s);
                    } else {
                        executed.failed += 1;
                    }
                }
            }
        }
        round += 1;
        scenarios = next_round(plan, &runnable, round, &req_per_s);
        if round >= plan.trials.min {
            show.add_trials(scenarios.len() as u64);
        }
    }
    Ok(executed)
}

/// The scenarios that get another round: all of them until the minimum is
/// reached, then (adaptive runs) those whose req/s interval is still too wide.
fn next_round(
    plan: &Plan,
    runnable: &[u32],
    round: u32,
    req_per_s: &BTreeMap<u32, Vec<f64>>,
) -> Vec<u32> {
    if round < plan.trials.min {
        return runnable.to_vec();
    }
    let Some(target_width) = plan.trials.until_ci else {
        return Vec::new();
    };
    runnable
        .iter()
        .copied()
        .filter(|s| {
            let values = req_per_s.get(s).map_or(&[][..], Vec::as_slice);
            relative_ci_width(values).is_none_or(|width| width > target_width)
        })
        .collect()
}

/// Half-width of the 95% median interval relative to the median, benchstat's
/// `± x%`; `None` while the interval is unbounded (too few trials).
fn relative_ci_width(values: &[f64]) -> Option<f64> {
    let ci = corobench_stats::median_ci(values, 0.95).ok()?;
    if !(ci.lo.is_finite() && ci.hi.is_finite()) || ci.estimate <= 0.0 {
        return None;
    }
    Some((ci.hi / ci.estimate - 1.0).max(1.0 - ci.lo / ci.estimate))
}
