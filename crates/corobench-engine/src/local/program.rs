//! The middle of a program trial on this machine: the program run to its
//! end on the generator CPUs while both process trees (the program's and
//! its server's, if it has one) are sampled, then the figures it printed
//! read. A program that fails, prints no result line, prints a malformed
//! one, misses a declared figure or overruns its time limit fails the
//! trial with the reason and the tail of its stderr; the run goes on.

use std::collections::BTreeMap;

use corobench_model::{ProgramMetric, ProgramResult};
use corobench_sampler::{DEFAULT_INTERVAL, ResourceSeries, Sampler, SamplerHandle};
use corobench_spec::PlannedScenario;
use corobench_target::{
    BenchmarkResult, BuiltTarget, CpuSet, ProgramEnd, ProgramOptions, ProgramRun, check_units,
    parse_benchmarks,
};

use super::server::LocalServer;
use crate::prepare::TrialEnvironment;
use crate::trial::Halt;

/// Spawns the program, samples it (and `server`, keeping its series there)
/// until it exits, and reads its figures.
pub(super) fn run(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    server: Option<&mut LocalServer>,
) -> Result<ProgramResult, Halt> {
    let built = env
        .built
        .get(&scenario.target)
        .ok_or_else(|| Halt::Failed(format!("{} was not built", scenario.target)))?;
    let options = ProgramOptions {
        parameters: scenario.parameters.clone(),
        cpus: Some(env.generator_set.clone()),
        server_url: server
            .as_ref()
            .map(|s| format!("http://{}", s.target.addr())),
        work_dir: None,
        time_limit: None,
        stop: Some(env.stop.clone()),
    };
    let server_sampler = server.as_ref().and_then(|s| {
        let pgid = s.target.pgid()?;
        start_sampler(Some(&env.generator_set), pgid)
    });
    let program = execute(built, &options, Some(&env.generator_set));
    if let Some(server) = server {
        server.sampled = stop_sampler(server_sampler);
    }
    program
}

/// Runs the built program to the end with `options`, sampling its process
/// tree from a thread on `sampler_cpus`, and reads its figures: the part of
/// a program trial that runs where the program does (here, or on a
/// generator host through `corobench program`).
pub fn execute(
    built: &BuiltTarget,
    options: &ProgramOptions,
    sampler_cpus: Option<&CpuSet>,
) -> Result<ProgramResult, Halt> {
    let name = &built.manifest.name;
    let running = built
        .spawn_program(options)
        .map_err(|e| Halt::Failed(format!("{name} did not start: {e}")))?;
    let program_sampler = start_sampler(sampler_cpus, running.pgid());
    let ended = running.wait();
    let program_series = stop_sampler(program_sampler);
    let ended = ended.map_err(|e| Halt::Failed(format!("running {name} failed: {e}")))?;
    let (metrics, lines) = figures(built, &ended)?;
    Ok(ProgramResult {
        metrics,
        lines,
        elapsed_s: ended.elapsed.as_secs_f64(),
        resources: program_series.map(|s| s.summary),
    })
}

/// The figures of a program that ran to the end, with its result lines.
fn figures(
    built: &BuiltTarget,
    ended: &ProgramRun,
) -> Result<(Vec<ProgramMetric>, Vec<String>), Halt> {
    let tail = || stderr_tail(&ended.stderr_tail);
    match ended.end {
        ProgramEnd::Stopped => return Err(Halt::Interrupted),
        ProgramEnd::TimedOut => {
            return Err(Halt::Failed(format!(
                "the program ran past its time limit ({:.0} s) and was stopped with its whole \
                 process tree; {}",
                ended.elapsed.as_secs_f64(),
                tail()
            )));
        }
        ProgramEnd::Exited if !ended.succeeded() => {
            let status = ended
                .status
                .map_or_else(|| "unknown".to_string(), |s| s.to_string());
            return Err(Halt::Failed(format!(
                "the program failed ({status}); {}",
                tail()
            )));
        }
        ProgramEnd::Exited => {}
    }
    let results = parse_benchmarks(&ended.stdout)
        .map_err(|e| Halt::Failed(format!("the program printed a bad result line: {e}")))?;
    if results.is_empty() {
        return Err(Halt::Failed(format!(
            "the program exited 0 but printed no result line (Go benchmark format, see \
             docs/targets.md); {}",
            tail()
        )));
    }
    let declared = built
        .manifest
        .program()
        .map(|p| p.metrics.clone())
        .unwrap_or_default();
    for result in &results {
        check_units(result, &declared).map_err(|e| Halt::Failed(e.to_string()))?;
    }
    let lines = ended
        .stdout
        .lines()
        .filter(|l| l.starts_with("Benchmark") && l.contains(char::is_whitespace))
        .map(str::to_string)
        .collect();
    Ok((merged_metrics(&results), lines))
}

/// One value per unit in the order first printed; a unit several lines
/// report gets the median of their values.
fn merged_metrics(results: &[BenchmarkResult]) -> Vec<ProgramMetric> {
    let mut order: Vec<String> = Vec::new();
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for measurement in results.iter().flat_map(|r| &r.measurements) {
        if !values.contains_key(&measurement.unit) {
            order.push(measurement.unit.clone());
        }
        values
            .entry(measurement.unit.clone())
            .or_default()
            .push(measurement.value);
    }
    order
        .into_iter()
        .map(|unit| {
            let value = corobench_stats::median(&values[&unit]).unwrap_or(f64::NAN);
            ProgramMetric { unit, value }
        })
        .collect()
}

fn stderr_tail(tail: &str) -> String {
    if tail.trim().is_empty() {
        "it wrote nothing to stderr".to_string()
    } else {
        format!("last lines of its stderr:\n{tail}")
    }
}

/// Samples a process group from a thread pinned to `cpus` (beside the
/// generator); `None` (and the trial goes on unsampled) when sampling
/// cannot start.
fn start_sampler(cpus: Option<&CpuSet>, pgid: i32) -> Option<SamplerHandle> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                if let Some(cpus) = cpus {
                    let _ = cpus.apply_to_current_thread();
                }
                Sampler::start(pgid, DEFAULT_INTERVAL).ok()
            })
            .join()
            .ok()
            .flatten()
    })
}

fn stop_sampler(sampler: Option<SamplerHandle>) -> Option<ResourceSeries> {
    sampler.and_then(|s| s.stop().ok())
}
