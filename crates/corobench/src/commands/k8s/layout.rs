//! From a resolved scenario to the [`Layout`] of its trial on a cluster:
//! the scenario's load split over the generators, the flags each generator
//! gets, and what a Pod layout cannot carry refused with the reason.

use std::time::Duration;

use corobench_model::ScheduleKind;
use corobench_spec::{Body, Plan, PlannedScenario};

use super::manifests::Layout;
use crate::exit;

/// The largest body carried inline in the Job's arguments: a Pod spec is
/// stored in etcd, whose objects are limited to about 1.5 MB.
const MAX_INLINE_BODY: usize = 64 * 1024;
/// Time the target gets to start, verify and wait for the generators, on
/// top of the measured time, before a forgotten Pod is stopped.
const TARGET_SLACK: Duration = Duration::from_secs(15 * 60);
/// Time the generators get to be scheduled, pull the image and wait for
/// `T`, on top of the measured time.
const JOB_SLACK: Duration = Duration::from_secs(10 * 60);

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
/// an unreadable or too large body file (exit 2).
pub fn layout(
    plan: &Plan,
    scenario: &PlannedScenario,
    options: &LayoutOptions,
) -> anyhow::Result<Layout> {
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

fn check_runs_in_pods(scenario: &PlannedScenario) -> anyhow::Result<()> {
    if scenario.program.is_some() {
        return Err(exit::usage(format!(
            "scenario {} ({}) runs a program, not a server under load; Kubernetes layouts \
             carry only servers: leave it out of the spec or pick another with --scenario",
            scenario.index, scenario.key
        )));
    }
    if scenario.needs_database {
        return Err(exit::usage(format!(
            "scenario {} ({}) reads the database, and a Kubernetes layout runs no PostgreSQL \
             beside the target: pick a scenario without /db with --scenario",
            scenario.index, scenario.key
        )));
    }
    Ok(())
}

/// The flags of `corobench load` for one of `generators` generators: the
/// scenario's connections and rate divided evenly, so that together they
/// offer the load the scenario names, not `generators` times it.
fn load_flags(scenario: &PlannedScenario, generators: u32) -> anyhow::Result<Vec<String>> {
    let m = &scenario.measurement;
    let schedule = &scenario.schedule;
    let connections = connections_each(scenario, generators)?;
    let mut flags = vec![
        "-c".to_string(),
        connections.to_string(),
        "-t".to_string(),
        m.generator_threads.to_string(),
        "-d".to_string(),
        cli_duration(m.duration),
        "--warmup".to_string(),
        cli_duration(m.warmup),
        "--timeout".to_string(),
        cli_duration(m.timeout),
        "--backend".to_string(),
        m.backend.name().to_string(),
    ];
    if let ScheduleKind::Open { rate_per_s } = schedule.kind {
        flags.extend([
            "-R".to_string(),
            (rate_per_s / f64::from(generators)).to_string(),
        ]);
    }
    if !schedule.keepalive {
        flags.push("--no-keepalive".to_string());
    }
    if schedule.pipeline > 1 {
        flags.extend(["--pipeline".to_string(), schedule.pipeline.to_string()]);
    }
    flags.extend(request_flags(scenario)?);
    Ok(flags)
}

fn connections_each(scenario: &PlannedScenario, generators: u32) -> anyhow::Result<u32> {
    let total = scenario.schedule.connections;
    let threads = scenario.measurement.generator_threads;
    let each = total / generators;
    if total % generators != 0 || each < threads {
        return Err(exit::usage(format!(
            "scenario {} ({}) opens {total} connections, which do not split into {generators} \
             generators of at least {threads} connection(s) each (one per generator thread): \
             choose --generators dividing {total} (at most {})",
            scenario.index,
            scenario.key,
            (total / threads.max(1)).max(1)
        )));
    }
    Ok(each)
}

/// Method, headers and body, as `corobench load` takes them.
fn request_flags(scenario: &PlannedScenario) -> anyhow::Result<Vec<String>> {
    let workload = &scenario.workload;
    let mut flags = Vec::new();
    if workload.method != "GET" {
        flags.extend(["-m".to_string(), workload.method.clone()]);
    }
    for (name, value) in &workload.headers {
        flags.extend(["-H".to_string(), format!("{name}: {value}")]);
    }
    let body = match &workload.body {
        Body::Empty => None,
        Body::Text(text) => Some(text.clone()),
        Body::File(path) => Some(inline_body(path)?),
    };
    if let Some(body) = body {
        flags.extend(["--body".to_string(), body]);
    }
    Ok(flags)
}

/// A body file's text, to pass inline: the generator pods do not see the
/// files of the machine that renders.
fn inline_body(path: &std::path::Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path)
        .map_err(|e| exit::usage(format!("cannot read the body file {}: {e}", path.display())))?;
    if bytes.len() > MAX_INLINE_BODY {
        return Err(exit::usage(format!(
            "the body file {} has {} bytes; a Kubernetes layout carries bodies of at most {} \
             bytes inline in the Job",
            path.display(),
            bytes.len(),
            MAX_INLINE_BODY
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        exit::usage(format!(
            "the body file {} is not UTF-8 text; a Kubernetes layout passes the body as an \
             argument, which must be text",
            path.display()
        ))
    })
}

/// A duration as `corobench load` parses it, without rounding.
fn cli_duration(duration: Duration) -> String {
    if duration.subsec_nanos() % 1_000_000 == 0 {
        format!("{}ms", duration.as_millis())
    } else {
        format!("{}us", duration.as_micros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_keep_their_precision() {
        assert_eq!(cli_duration(Duration::from_secs(10)), "10000ms");
        assert_eq!(cli_duration(Duration::from_micros(1500)), "1500us");
        assert_eq!(cli_duration(Duration::ZERO), "0ms");
    }
}
