//! Everything a run needs once, before its first trial: builds, the
//! payload `/file` serves, request bodies, PostgreSQL when a workload reads
//! the database, the run's certificates when a scenario speaks TLS, the
//! generator's backend, and one verification per target.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use corobench_model::BackendChoice;
use corobench_spec::{Body, Plan};
use corobench_target::{BuiltTarget, CpuSet, Manifest, Postgres, RunCertificates, TlsFiles};

use crate::error::EngineError;
use crate::events::RunObserver;
use crate::provenance;
use crate::targets::Targets;
use crate::verification::{expectations, gate};
use crate::workspace::Workspace;

/// What every trial of a run shares.
#[derive(Debug)]
pub struct TrialEnvironment {
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
    /// Run the machine-speed probe before each trial (`[run] machine_probe`).
    pub machine_probe: bool,
    /// The run's certificates, when a scenario speaks TLS: handed to the
    /// targets (`TLS_CERT`, `TLS_KEY`) and trusted by the generator.
    pub tls: Option<TlsFiles>,
    pub stop: Arc<AtomicBool>,
}

/// A target left out of a run, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExcludedTarget {
    pub target: String,
    /// A failed build or verification, in words.
    pub reason: String,
}

/// A run ready to go: its environment, PostgreSQL if it runs, and what was
/// left out. Dropping it stops PostgreSQL and removes the scratch folder.
#[derive(Debug)]
pub struct PreparedRun {
    pub env: TrialEnvironment,
    /// The build cache, payload and scratch folder (`env.work_root`).
    pub workspace: Workspace,
    pub postgres: Option<Postgres>,
    pub excluded: Vec<ExcludedTarget>,
    pub tool_versions: BTreeMap<String, String>,
    pub target_sources: BTreeMap<String, String>,
    /// The run's certificates (removed with the run).
    pub certificates: Option<RunCertificates>,
}

impl PreparedRun {
    /// Leaves `target` out of the run.
    /// Takes in a server that is already running: nothing to build, its
    /// address and process recorded as its provenance.
    fn attach(&mut self, manifest: &Manifest) {
        self.tool_versions.extend(manifest.tool_versions());
        self.tool_versions
            .extend(corobench_target::attached_provenance(manifest));
        let built = BuiltTarget {
            manifest: manifest.clone(),
            out_dir: manifest.dir.clone(),
            source_hash: "already running".to_owned(),
            cache_root: self.workspace.cache.root().to_path_buf(),
            unread_sources: Vec::new(),
        };
        self.env.built.insert(manifest.name.clone(), built);
    }

    pub fn exclude(&mut self, target: &str, reason: String) {
        self.env.built.remove(target);
        self.excluded.push(ExcludedTarget {
            target: target.to_string(),
            reason,
        });
    }
}

impl Drop for PreparedRun {
    fn drop(&mut self) {
        // PostgreSQL's cluster lives in the scratch folder: stopped first,
        // then the workspace removes the folder.
        if let Some(postgres) = self.postgres.take() {
            let _ = postgres.stop();
        }
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
    observer: &dyn RunObserver,
) -> Result<PreparedRun, EngineError> {
    let workspace = Workspace::open("run")?;
    let mut env = environment(plan, &workspace, stop, observer)?;
    let certificates = certificates(plan, &workspace)?;
    env.tls = certificates.as_ref().map(|c| c.files().clone());
    let mut prepared = PreparedRun {
        env,
        workspace,
        postgres: None,
        excluded: Vec::new(),
        tool_versions: BTreeMap::new(),
        target_sources: BTreeMap::new(),
        certificates,
    };
    build_all(plan, targets, &mut prepared, observer);
    if plan.scenarios.iter().any(|s| s.needs_database) {
        observer.preparing("starting PostgreSQL");
        let postgres = start_postgres(&prepared.env.work_root, &prepared.env.server_cpus)?;
        prepared.env.database_url = Some(postgres.url());
        prepared.postgres = Some(postgres);
    }
    gate::verify_all(plan, &mut prepared, observer);
    expectations::check_all(plan, &prepared, observer)?;
    Ok(prepared)
}

/// A run whose targets are built and started on the server host
/// (`[hosts]`): `corobench serve` builds and verifies there, so nothing is
/// built here; only the bodies, the backend and, when a scenario speaks
/// TLS, the run's certificates (naming the server host's address, sent to
/// the hosts with each trial) are made.
///
/// # Errors
/// The scratch folder, a body file or the certificates could not be made
/// or read.
pub fn prepare_for_hosts(
    plan: &Plan,
    stop: Arc<AtomicBool>,
    observer: &dyn RunObserver,
) -> Result<PreparedRun, EngineError> {
    let workspace = Workspace::open("run")?;
    let mut env = environment(plan, &workspace, stop, observer)?;
    let certificates = certificates(plan, &workspace)?;
    env.tls = certificates.as_ref().map(|c| c.files().clone());
    Ok(PreparedRun {
        env,
        workspace,
        postgres: None,
        excluded: Vec::new(),
        tool_versions: BTreeMap::new(),
        target_sources: BTreeMap::new(),
        certificates,
    })
}

/// A throwaway authority and a leaf for the targets' addresses (on hosts,
/// the address generators reach the server host by and the one its target
/// binds), made once when a scenario speaks TLS, in the run's private
/// scratch folder.
fn certificates(
    plan: &Plan,
    workspace: &Workspace,
) -> Result<Option<RunCertificates>, EngineError> {
    if !plan.scenarios.iter().any(|s| s.schedule.protocol.tls) {
        return Ok(None);
    }
    let names: Vec<String> = plan
        .hosts
        .iter()
        .flat_map(|h| [h.server_address.clone(), h.listen.clone()])
        .collect();
    RunCertificates::create_naming(&workspace.work_dir.join("tls"), &[], &names)
        .map(Some)
        .map_err(|e| EngineError::Certificates(Box::new(e)))
}

fn environment(
    plan: &Plan,
    workspace: &Workspace,
    stop: Arc<AtomicBool>,
    observer: &dyn RunObserver,
) -> Result<TrialEnvironment, EngineError> {
    Ok(TrialEnvironment {
        built: BTreeMap::new(),
        data_dir: workspace.data_dir.clone(),
        work_root: workspace.work_dir.clone(),
        database_url: None,
        bodies: bodies(plan)?,
        server_cpus: cpu_set(&plan.server_cpus)?,
        generator_cpus: plan.generator_cpus.clone(),
        generator_set: cpu_set(&plan.generator_cpus)?,
        backend: resolve_backend(plan, observer),
        machine_probe: plan.machine_probe,
        tls: None,
        stop,
    })
}

/// Starts PostgreSQL on the server's CPUs (it is server-side work; the
/// generator's CPUs must stay quiet), then restores this thread's CPUs.
fn start_postgres(work_root: &Path, server_cpus: &CpuSet) -> Result<Postgres, EngineError> {
    let original = CpuSet::allowed()?;
    server_cpus.apply_to_current_thread()?;
    let started = Postgres::start(work_root);
    original.apply_to_current_thread()?;
    started.map_err(|e| EngineError::Postgres(Box::new(e)))
}

/// The spec's backend for this run; `auto` is io_uring where the kernel allows it.
fn resolve_backend(plan: &Plan, observer: &dyn RunObserver) -> corobench_load::Backend {
    let choice = plan
        .scenarios
        .first()
        .map_or(BackendChoice::Auto, |s| s.measurement.backend);
    let (backend, passed_over) = corobench_load::resolve_backend(choice);
    if let Some(why) = passed_over {
        observer.notice(&format!(
            "note: using the epoll backend: io_uring is not usable here ({why})"
        ));
    }
    backend
}

fn cpu_set(cpus: &[usize]) -> Result<CpuSet, EngineError> {
    let set = CpuSet::parse(&provenance::cpu_list(cpus))?;
    set.validate()?;
    Ok(set)
}

fn bodies(plan: &Plan) -> Result<BTreeMap<String, Vec<u8>>, EngineError> {
    let mut bodies = BTreeMap::new();
    for scenario in &plan.scenarios {
        let workload = &scenario.workload;
        let body = match &workload.body {
            Body::Empty => continue,
            Body::Text(text) => text.clone().into_bytes(),
            Body::File(path) => {
                std::fs::read(path).map_err(|error| EngineError::BodyUnreadable {
                    workload: workload.name.clone(),
                    path: path.clone(),
                    error,
                })?
            }
        };
        bodies.insert(workload.name.clone(), body);
    }
    Ok(bodies)
}

fn build_all(
    plan: &Plan,
    targets: &Targets,
    prepared: &mut PreparedRun,
    observer: &dyn RunObserver,
) {
    // Every target a scenario names, and the servers its programs talk to.
    let servers = plan
        .scenarios
        .iter()
        .filter_map(|s| s.program.as_ref()?.server.as_ref())
        .map(|server| server.target.as_str());
    let names: BTreeSet<&str> = plan
        .scenarios
        .iter()
        .map(|s| s.target.as_str())
        .chain(servers)
        .collect();
    for name in names {
        let Some(manifest) = targets.get(name) else {
            continue;
        };
        if manifest.attach.is_some() {
            prepared.attach(manifest);
            continue;
        }
        // Say "building" only when there is something to build: not for a
        // server without a build command, nor for sources already cached.
        if !prepared.workspace.cache.is_built(manifest).unwrap_or(false) {
            observer.preparing(&format!("building {name}"));
        }
        let log = prepared.workspace.cache.log_path(name);
        match prepared.workspace.cache.build(manifest, &log) {
            Ok(built) => {
                prepared
                    .target_sources
                    .insert(name.to_string(), built.source_hash.clone());
                prepared.tool_versions.extend(manifest.tool_versions());
                if !manifest.contract {
                    let provenance = corobench_target::server_provenance(&built);
                    prepared.tool_versions.extend(provenance);
                }
                prepared.env.built.insert(name.to_string(), built);
            }
            Err(error) => prepared.excluded.push(ExcludedTarget {
                target: name.to_string(),
                reason: format!("build failed: {error}"),
            }),
        }
    }
}
