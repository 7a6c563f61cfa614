//! From a resolved scenario to the [`Layout`] of its trial on a cluster:
//! the scenario's load split over the generators, the flags each generator
//! gets, and what a Pod layout cannot carry refused with the reason.

use std::path::PathBuf;
use std::time::Duration;

use corobench_spec::{Body, Plan, PlannedScenario};

use super::manifests::Layout;
use crate::generator::{self, UnevenShare};

/// The largest body carried inline in the Job's arguments: a Pod spec is
/// stored in etcd, whose objects are limited to about 1.5 MB.
const MAX_INLINE_BODY: usize = 64 * 1024;
/// Time the target gets to start, verify and wait for the generators, on
/// top of the measured time, before a forgotten Pod is stopped.
const TARGET_SLACK: Duration = Duration::from_secs(15 * 60);
/// Time the generators get to be scheduled, pull the image and wait for
/// `T`, on top of the measured time.
const JOB_SLACK: Duration = Duration::from_secs(10 * 60);

/// What a Pod layout cannot carry.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    #[error(
        "scenario {index} ({key}) runs a program, not a server under load; Kubernetes layouts \
         carry only servers"
    )]
    Program { index: u32, key: String },
    #[error(
        "scenario {index} ({key}) reads the database, and a Kubernetes layout runs no \
         PostgreSQL beside the target"
    )]
    Database { index: u32, key: String },
    #[error(
        "scenario {index} ({key}) speaks {protocol}, and a Kubernetes layout speaks cleartext \
         HTTP/1.1 only for now (its pods get no certificates): lay out the cleartext scenarios"
    )]
    Protocol {
        index: u32,
        key: String,
        protocol: corobench_model::Protocol,
    },
    #[error(transparent)]
    Uneven(#[from] UnevenShare),
    #[error("cannot read the body file {}: {source}", path.display())]
    BodyUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the body file {} has {bytes} bytes; a Kubernetes layout carries bodies of at most \
         {MAX_INLINE_BODY} bytes inline in the Job",
        path.display()
    )]
    BodyTooLarge { path: PathBuf, bytes: usize },
    #[error(
        "the body file {} is not UTF-8 text; a Kubernetes layout passes the body as an \
         argument, which must be text",
        path.display()
    )]
    BodyNotText { path: PathBuf },
}

/// What the command line chooses about a layout.
#[derive(Clone, Debug)]
pub struct LayoutOptions {
    pub namespace: String,
    pub image: String,
    pub generators: u32,
    pub server_memory: String,
    pub generator_memory: String,
}

/// The layout of one scenario's trial.
///
/// # Errors
/// A scenario a Pod layout cannot run (a program, one that needs
/// PostgreSQL), a load that does not split evenly over the generators, or
/// an unreadable or too large body file.
pub fn layout(
    plan: &Plan,
    scenario: &PlannedScenario,
    options: &LayoutOptions,
) -> Result<Layout, LayoutError> {
    check_runs_in_pods(scenario)?;
    let m = &scenario.measurement;
    let server_cpus = u32::try_from(plan.server_cpus.len())
        .unwrap_or(u32::MAX)
        .max(1);
    let measured = m.warmup + m.duration + m.timeout;
    Ok(Layout {
        namespace: options.namespace.clone(),
        image: options.image.clone(),
        scenario_index: scenario.index,
        scenario_key: scenario.key.to_string(),
        target: scenario.target.clone(),
        parameters: scenario.parameters.clone(),
        server_cpus,
        server_memory: options.server_memory.clone(),
        generators: options.generators,
        generator_cpus: m.generator_threads,
        generator_memory: options.generator_memory.clone(),
        load_flags: load_flags(scenario, options.generators)?,
        path: scenario.workload.path.clone(),
        target_deadline_s: (measured + TARGET_SLACK).as_secs(),
        job_deadline_s: (measured + JOB_SLACK).as_secs(),
    })
}

fn check_runs_in_pods(scenario: &PlannedScenario) -> Result<(), LayoutError> {
    let (index, key) = (scenario.index, scenario.key.to_string());
    if scenario.program.is_some() {
        return Err(LayoutError::Program { index, key });
    }
    if scenario.needs_database {
        return Err(LayoutError::Database { index, key });
    }
    let protocol = scenario.schedule.protocol;
    if !protocol.is_http1() {
        return Err(LayoutError::Protocol {
            index,
            key,
            protocol,
        });
    }
    Ok(())
}

/// The flags of `corobench load` every generator pod runs: the scenario's
/// connections and rate divided evenly, so that together they offer the
/// load the scenario names, not `generators` times it.
fn load_flags(scenario: &PlannedScenario, generators: u32) -> Result<Vec<String>, LayoutError> {
    let share = generator::even_share(scenario, generators)?;
    let backend = scenario.measurement.backend.name();
    let mut flags = generator::load_args(scenario, share, backend);
    flags.extend(body_flags(scenario)?);
    Ok(flags)
}

/// The body, as `corobench load` takes it.
fn body_flags(scenario: &PlannedScenario) -> Result<Vec<String>, LayoutError> {
    let body = match &scenario.workload.body {
        Body::Empty => None,
        Body::Text(text) => Some(text.clone()),
        Body::File(path) => Some(inline_body(path)?),
    };
    Ok(body.map_or_else(Vec::new, |body| vec!["--body".to_string(), body]))
}

/// A body file's text, to pass inline: the generator pods do not see the
/// files of the machine that renders.
fn inline_body(path: &std::path::Path) -> Result<String, LayoutError> {
    let bytes = std::fs::read(path).map_err(|source| LayoutError::BodyUnreadable {
        path: path.to_owned(),
        source,
    })?;
    if bytes.len() > MAX_INLINE_BODY {
        return Err(LayoutError::BodyTooLarge {
            path: path.to_owned(),
            bytes: bytes.len(),
        });
    }
    String::from_utf8(bytes).map_err(|_| LayoutError::BodyNotText {
        path: path.to_owned(),
    })
}
