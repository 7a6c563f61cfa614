//! What the store keeps of a run's scenarios and tools: every parameter
//! with its default filled in, the size of each request's body, the
//! versions of what was built.

use std::collections::BTreeMap;

use corobench_model::{ProgramScenario, RunRecord, ScenarioRecord, ServerChoice, WorkloadRecord};
use corobench_spec::{Plan, PlannedScenario};

use crate::error::EngineError;
use crate::prepare::PreparedRun;
use crate::targets::Targets;

/// The scenario records stored with the run: every parameter, defaults
/// included, and the size of the body each request carries.
///
/// # Errors
/// A target the catalog does not know, or a parameter it refuses.
pub fn scenario_records(
    plan: &Plan,
    targets: &Targets,
    bodies: &BTreeMap<String, Vec<u8>>,
) -> Result<Vec<ScenarioRecord>, EngineError> {
    plan.scenarios
        .iter()
        .map(|s| scenario_record(s, targets, bodies))
        .collect()
}

/// One scenario as stored.
///
/// # Errors
/// As [`scenario_records`].
pub fn scenario_record(
    s: &PlannedScenario,
    targets: &Targets,
    bodies: &BTreeMap<String, Vec<u8>>,
) -> Result<ScenarioRecord, EngineError> {
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
            idle: s.workload.idle,
            background: s.workload.background.clone(),
        },
        schedule: s.schedule.kind,
        connections: s.schedule.connections,
        wire: s.schedule.wire(),
        protocol: s.schedule.protocol,
        warmup_s: s.measurement.warmup.as_secs_f64(),
        duration_s: s.measurement.duration.as_secs_f64(),
        program: s
            .program
            .as_ref()
            .map(|p| program_record(p, targets))
            .transpose()?,
    })
}

/// A program scenario as stored: the server with every parameter.
fn program_record(
    program: &ProgramScenario,
    targets: &Targets,
) -> Result<ProgramScenario, EngineError> {
    let server = program
        .server
        .as_ref()
        .map(|server| -> Result<ServerChoice, EngineError> {
            Ok(ServerChoice {
                target: server.target.clone(),
                parameters: targets.parameters(&server.target, &server.parameters)?,
            })
        })
        .transpose()?;
    Ok(ProgramScenario { server })
}

/// The run's record with the generator's backend and what was built.
#[must_use]
pub fn with_tools(mut run: RunRecord, prepared: &PreparedRun) -> RunRecord {
    run.provenance.load_backend = prepared.env.backend.name().to_string();
    run.provenance
        .tool_versions
        .extend(prepared.tool_versions.clone());
    run.provenance
        .target_sources
        .extend(prepared.target_sources.clone());
    run
}
