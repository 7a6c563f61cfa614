//! Spec text → validated plan: every key and value checked once, against the
//! catalog, the spec's bounds and the process's limits, then sweeps expanded
//! into scenarios. Whatever could fail before the first trial fails here,
//! with the file, line, column and key.

mod background;
mod capacity;
mod claims;
mod expectations;
mod hosts;
mod idle;
mod protocol;
mod repeats;
mod schedule;
mod settings;
mod targets;
mod workloads;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use corobench_model::{ProgramScenario, ScenarioKey, Schedule};

use crate::catalog::Catalog;
use crate::document::{self, Table};
use crate::error::{Locator, SpecError};
use crate::keys;
use crate::limits::{Limits, MAX_PLAN_BYTES, MAX_SCENARIOS};
use crate::plan::{
    Body, Expectation, Measurement, Plan, PlannedScenario, SkippedProtocol, Workload,
};
use crate::program::{is_program, program_scenario};

use settings::Settings;
pub use settings::{PrecisionGoal, precision_goal};
use workloads::PlannedWorkload;

pub use capacity::at_rate;
pub use hosts::{AddressError, MAX_GENERATOR_HOSTS, parse_address};

/// Resolves a spec text into a plan, within the spec's own bounds only; see
/// [`resolve_within`] to check it against the limits of the process too.
///
/// # Errors
/// As [`resolve_within`].
pub fn resolve(text: &str, path: Option<&Path>, catalog: &Catalog) -> Result<Plan, SpecError> {
    resolve_within(text, path, catalog, &Limits::default())
}

/// Resolves a spec text into a plan that this process can run.
///
/// # Errors
/// Any syntax error, unknown key, unknown target or parameter, value out of
/// its bounds, repeated sweep value, impossible CPU set or connection count,
/// naming the file, line, column and key, and how to fix it.
pub fn resolve_within(
    text: &str,
    path: Option<&Path>,
    catalog: &Catalog,
    limits: &Limits,
) -> Result<Plan, SpecError> {
    let at = Locator::new(path, text);
    let parsed = document::parse(&at)?;
    let spec = Table::document(parsed.get_ref(), keys::TOP_LEVEL, &at)?;
    let name = settings::name(spec.get("name"), &at)?.unwrap_or_else(|| default_name(path));
    let description = settings::description(spec.get("description"), &at)?.unwrap_or_default();
    let selection = targets::select(spec.get("targets"), catalog, &at)?;
    let baseline = targets::baseline(spec.get("baseline"), &selection, catalog, &at)?;
    let sweeps = targets::parameter_sweeps(spec.get("parameters"), &selection, catalog, &at)?;
    let settings = settings::read(spec.get("run"), catalog, &at)?;
    let (programs, servers): (Sweeps, Sweeps) = sweeps
        .into_iter()
        .partition(|(target, _)| is_program(catalog, target));
    let program = program_scenario(spec.get("program"), &selection.run, catalog, &at)?;
    // A spec of program targets alone needs no workload.
    let workloads = if servers.is_empty() && !programs.is_empty() {
        capacity::refuse_rates_for_programs(&spec, &at)?;
        Vec::new()
    } else {
        workloads::read(&spec, path, &settings, limits, &at)?
    };
    check_size(&servers, &workloads, &at)?;
    let mut scenarios = program_runs(&programs, &settings, &program);
    let (served, skipped_protocols) =
        expand(&servers, &workloads, &settings, catalog, scenarios.len());
    scenarios.extend(served);
    let capacity = capacity::read(spec.get("capacity"), &at)?;
    if let Some(settings) = &capacity {
        capacity::refuse_rates(&spec, &at)?;
        capacity::refuse_programs(&scenarios, spec.get("capacity"), &at)?;
        capacity::refuse_pipelining(&spec, &scenarios, &at)?;
        scenarios = scenarios
            .iter()
            .map(|s| at_rate(s, settings.start_rate, s.index))
            .collect();
    }
    schedule::refuse_empty_windows(&scenarios, capacity.as_ref(), &spec, &at)?;
    let workload_names: Vec<String> = workloads.iter().map(|w| w.workload.name.clone()).collect();
    let context = claims::Context {
        catalog,
        selection: &selection,
        workloads: &workload_names,
        scenarios: &scenarios,
        skipped_protocols: &skipped_protocols,
    };
    let claims = claims::read(spec.get("claims"), &context, &at)?;
    let hosts = hosts::read(spec.get("hosts"), &at)?;
    hosts::refuse_unsupported((spec.get("hosts"), hosts.as_ref()), &scenarios, &at)?;
    Ok(Plan {
        name,
        description,
        spec_text: text.to_string(),
        spec_path: path.map(Path::to_path_buf),
        trials: settings.trials,
        seed: settings.seed,
        machine_probe: settings.machine_probe,
        server_cpus: settings.server_cpus,
        generator_cpus: settings.generator_cpus,
        scenarios,
        skipped_targets: selection.skipped,
        skipped_protocols,
        baseline,
        claims,
        capacity,
        hosts,
        profile: settings.profile,
    })
}

fn default_name(path: Option<&Path>) -> String {
    path.and_then(Path::file_stem).map_or_else(
        || "default".to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// Every parameter combination of each target to run, in the spec's target order.
type Sweeps = Vec<(String, Vec<BTreeMap<String, String>>)>;

/// Refuses, before anything is expanded, a plan too large to hold: too many
/// scenarios, or requests copied into so many scenarios that they would not
/// fit in memory.
fn check_size(
    sweeps: &Sweeps,
    workloads: &[PlannedWorkload],
    at: &Locator<'_>,
) -> Result<(), SpecError> {
    let combinations: usize = sweeps.iter().map(|(_, c)| c.len()).sum();
    let mut scenarios: usize = 0;
    let mut bytes: u64 = 0;
    for planned in workloads {
        let own = combinations.saturating_mul(planned.schedules.len());
        scenarios = scenarios.saturating_add(own);
        if scenarios > MAX_SCENARIOS {
            return Err(at.at(
                planned.name_span.clone(),
                &planned.key,
                too_many_scenarios(),
            ));
        }
        let copies = planned.inline_bytes.saturating_mul(own as u64);
        bytes = bytes
            .saturating_add(copies)
            .saturating_add(planned.file_bytes);
        if bytes > MAX_PLAN_BYTES {
            let message = format!(
                "the plan would hold more than {} MiB of requests: this workload's request ({} bytes) is copied into each of its {own} scenarios; move its body to body_file or sweep fewer values",
                MAX_PLAN_BYTES >> 20,
                planned.inline_bytes
            );
            return Err(at.at(planned.name_span.clone(), &planned.key, message));
        }
    }
    Ok(())
}

/// Every target × parameter combination × workload × schedule, in that
/// order, but for the schedules in a protocol their target does not serve:
/// those are counted, per target and protocol, with the manifest's reason.
fn expand(
    sweeps: &Sweeps,
    workloads: &[PlannedWorkload],
    settings: &Settings,
    catalog: &Catalog,
    first_index: usize,
) -> (Vec<PlannedScenario>, Vec<SkippedProtocol>) {
    let mut scenarios: Vec<PlannedScenario> = Vec::new();
    let mut skipped: Vec<SkippedProtocol> = Vec::new();
    for (target, combinations) in sweeps {
        let unserved = catalog.get(target).map(|t| &t.unserved);
        for parameters in combinations {
            for planned in workloads {
                for schedule in &planned.schedules {
                    let protocol = schedule.protocol;
                    if let Some(reason) = unserved.and_then(|u| u.get(&protocol)) {
                        skip(&mut skipped, target, protocol, reason);
                        continue;
                    }
                    let index = first_index + scenarios.len();
                    let place = (target.as_str(), parameters, planned, *schedule);
                    scenarios.push(scenario(index, place, settings, catalog));
                }
            }
        }
    }
    (scenarios, skipped)
}

/// Counts one more scenario of `target` left out for `protocol`.
fn skip(
    skipped: &mut Vec<SkippedProtocol>,
    target: &str,
    protocol: corobench_model::Protocol,
    reason: &str,
) {
    match skipped
        .iter_mut()
        .find(|s| s.target == target && s.protocol == protocol)
    {
        Some(entry) => entry.scenarios += 1,
        None => skipped.push(SkippedProtocol {
            target: target.to_owned(),
            protocol,
            reason: reason.to_owned(),
            scenarios: 1,
        }),
    }
}

/// Where a scenario sits in the sweep: target, parameters, workload, schedule.
type Place<'p> = (
    &'p str,
    &'p BTreeMap<String, String>,
    &'p PlannedWorkload,
    Schedule,
);

/// Why a spec that expands into too many scenarios is refused.
fn too_many_scenarios() -> String {
    format!(
        "the spec expands into more than {MAX_SCENARIOS} scenarios (targets × parameter combinations × workloads × connections × rates); sweep fewer values or split the spec"
    )
}

fn scenario(
    index: usize,
    (target, parameters, planned, schedule): Place<'_>,
    settings: &Settings,
    catalog: &Catalog,
) -> PlannedScenario {
    let workload = &planned.workload;
    let key = ScenarioKey::compose(target, parameters, &workload.name, &schedule);
    PlannedScenario {
        // check_size keeps the count far below u32::MAX.
        index: u32::try_from(index).unwrap_or(u32::MAX),
        key,
        target: target.to_string(),
        parameters: parameters.clone(),
        workload: workload.clone(),
        schedule,
        measurement: Measurement {
            warmup: settings
                .measurement
                .warmup
                .max(catalog.get(target).map_or(Duration::ZERO, |t| t.min_warmup)),
            ..settings.measurement
        },
        needs_database: ["/db", "/select1"]
            .iter()
            .any(|p| workload.path.starts_with(p)),
        program: None,
    }
}

/// One scenario per parameter combination of each program target.
fn program_runs(
    sweeps: &Sweeps,
    settings: &Settings,
    program: &ProgramScenario,
) -> Vec<PlannedScenario> {
    let mut scenarios = Vec::new();
    for (target, combinations) in sweeps {
        for parameters in combinations {
            scenarios.push(PlannedScenario {
                index: u32::try_from(scenarios.len()).unwrap_or(u32::MAX),
                key: ScenarioKey::program(target, parameters),
                target: target.clone(),
                parameters: parameters.clone(),
                workload: Workload {
                    name: "program".to_string(),
                    method: String::new(),
                    path: String::new(),
                    headers: Vec::new(),
                    body: Body::Empty,
                    expect: Expectation::default(),
                    idle: false,
                    background: None,
                },
                schedule: Schedule::closed(0),
                measurement: settings.measurement,
                needs_database: false,
                program: Some(program.clone()),
            });
        }
    }
    scenarios
}
