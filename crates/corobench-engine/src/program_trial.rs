//! One trial of a program scenario: start the server it talks to (if any)
//! fresh on the server CPUs, run the program to completion on the generator
//! CPUs while both process trees are sampled, then read the figures it
//! printed. A program that fails, prints no result line, prints a malformed
//! one, misses a declared figure or overruns its time limit fails the trial
//! with the reason and the tail of its stderr; the run goes on.

use std::collections::BTreeMap;

use corobench_model::{ProgramMetric, ProgramResult, ResourceSummary, ServerChoice, TrialStatus};
use corobench_sampler::{DEFAULT_INTERVAL, ResourceSeries, Sampler, SamplerHandle};
use corobench_spec::PlannedScenario;
use corobench_target::{
    BenchmarkResult, BuiltTarget, CpuSet, ProgramEnd, ProgramOptions, ProgramRun, RunningTarget,
    check_units, parse_benchmarks,
};

use crate::events::{Phase, RunEvent, RunObserver};
use crate::order::TrialSlot;
use crate::prepare::TrialEnvironment;
use crate::rounds::TrialOutcome;
use crate::trial::{blank_record, failed, launch_server};

/// Runs one trial of the program scenario `scenario`.
pub fn run(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    slot: TrialSlot,
    sequence: u32,
    observer: &dyn RunObserver,
) -> TrialOutcome {
    let mut trial = blank_record(slot, sequence);
    observer.on(RunEvent::TrialPhase(Phase::Starting));
    let server_choice = scenario.program.as_ref().and_then(|p| p.server.as_ref());
    let server = match server_choice.map(|s| start_server(env, s)).transpose() {
        Ok(server) => server,
        Err(why) => return failed(trial, why),
    };
    observer.on(RunEvent::TrialPhase(Phase::RunningProgram));
    let outcome = run_program(env, scenario, server.as_ref());
    if let Some(server) = server {
        let _ = server.stop();
    }
    match outcome {
        Err(Stop::Interrupted) => TrialOutcome::Interrupted,
        Err(Stop::Failed(why)) => failed(trial, why),
        Ok((program, server_resources)) => {
            trial.status = TrialStatus::Ok;
            trial.resources = server_resources;
            trial.program = Some(program);
            TrialOutcome::Ended(Box::new(trial))
        }
    }
}

/// Why a program trial measured nothing.
#[derive(Debug)]
pub enum Stop {
    Interrupted,
    Failed(String),
}

fn start_server(env: &TrialEnvironment, server: &ServerChoice) -> Result<RunningTarget, String> {
    launch_server(env, &server.target, &server.parameters, false)
        .map_err(|e| format!("the server {server} did not start: {e}"))
}

/// Spawns the program, samples it (and the server) until it exits, and
/// reads its figures.
fn run_program(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    server: Option<&RunningTarget>,
) -> Result<(ProgramResult, Option<ResourceSummary>), Stop> {
    let built = env
        .built
        .get(&scenario.target)
        .ok_or_else(|| Stop::Failed(format!("{} was not built", scenario.target)))?;
    let options = ProgramOptions {
        parameters: scenario.parameters.clone(),
        cpus: Some(env.generator_set.clone()),
        server_url: server.map(|s| format!("http://{}", s.addr())),
        work_dir: None,
        time_limit: None,
        stop: Some(env.stop.clone()),
    };
    let server_sampler = server.and_then(|s| start_sampler(Some(&env.generator_set), s.pgid()));
    let program = execute(built, &options, Some(&env.generator_set));
    let server_series = stop_sampler(server_sampler);
    Ok((program?, server_series.map(|s| s.summary)))
}

/// Runs the built program to the end with `options`, sampling its process
/// tree from a thread on `sampler_cpus`, and reads its figures: the part of
/// a program trial that runs where the program does (here, or on a
/// generator host through `corobench program`).
pub fn execute(
    built: &BuiltTarget,
    options: &ProgramOptions,
    sampler_cpus: Option<&CpuSet>,
) -> Result<ProgramResult, Stop> {
    let name = &built.manifest.name;
    let running = built
        .spawn_program(options)
        .map_err(|e| Stop::Failed(format!("{name} did not start: {e}")))?;
    let program_sampler = start_sampler(sampler_cpus, running.pgid());
    let ended = running.wait();
    let program_series = stop_sampler(program_sampler);
    let ended = ended.map_err(|e| Stop::Failed(format!("running {name} failed: {e}")))?;
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
) -> Result<(Vec<ProgramMetric>, Vec<String>), Stop> {
    let tail = || stderr_tail(&ended.stderr_tail);
    match ended.end {
        ProgramEnd::Stopped => return Err(Stop::Interrupted),
        ProgramEnd::TimedOut => {
            return Err(Stop::Failed(format!(
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
            return Err(Stop::Failed(format!(
                "the program failed ({status}); {}",
                tail()
            )));
        }
        ProgramEnd::Exited => {}
    }
    let results = parse_benchmarks(&ended.stdout)
        .map_err(|e| Stop::Failed(format!("the program printed a bad result line: {e}")))?;
    if results.is_empty() {
        return Err(Stop::Failed(format!(
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
        check_units(result, &declared).map_err(|e| Stop::Failed(e.to_string()))?;
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
