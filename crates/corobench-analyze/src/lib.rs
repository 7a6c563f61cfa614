//! Statistics on stored runs, computed once, before any reporter runs.
//!
//! A library of its own, so that anything that judges stored runs (the
//! command line, a results site built from many machines' runs, a test)
//! needs only the plain data of a run: it depends on `corobench-model` and
//! `corobench-stats`, never on the store, the command line or the runner.
//!
//! This is the only place where domain records meet `corobench-stats`: it
//! reads [`StoredRun`]s and produces a [`RunAnalysis`] (one run, every
//! target compared with a baseline target) or a [`RunComparison`] (two runs,
//! scenario by scenario). Reporters in `corobench-report` only format what
//! these types hold, so every output format shows the same figures.
//!
//! - [`scenarios`]: per-scenario summaries, merged latency, labels.
//! - [`baseline`]: matching scenarios with the baseline target and the
//!   U-test comparisons.
//! - [`runs`]: two runs compared, with geomean rows.
//! - [`gate`]: the regression gate of `compare --fail-on`.
//! - [`sweeps`]: scenarios that differ in one dimension, for sweep charts.
//! - [`capacity`]: a capacity search's rates, capacity with its interval
//!   and comparisons between targets.
//! - [`claims`]: published claims against the trials: a measured ratio
//!   with its interval and a verdict that says why.
//! - [`usl`]: the Universal Scalability Law fitted to concurrency sweeps.
//! - [`warnings`]: what the reader must know, worded as what to do.
//! - [`goal`]: which scenarios reached the run's req/s precision goal.
//! - [`precision`]: how precisely a median is known, for the warnings and
//!   for the runner's adaptive stop alike.
//! - [`machine_kind`]: the kind of machine a run was measured on, and the
//!   newest complete run of each suite on each kind.
//! - [`across_machines`]: each claim's verdicts across machine kinds.
//! - [`capacity_judging`]: how a capacity trial and a rate's trials are
//!   judged, for the runner's search and the estimate alike.

mod across_machines;
mod baseline;
mod capacity;
pub mod capacity_judging;
mod change;
mod claims;
mod counter_warnings;
mod cpu_split;
#[cfg(any(test, feature = "test-support"))]
pub mod fixtures;
pub mod gate;
mod goal;
mod machine;
mod machine_kind;
mod memory;
mod precision;
mod reconnects;
mod runs;
mod scenarios;
mod slow_stop;
mod sweeps;
mod usl;
mod warnings;
mod wide;

#[cfg(test)]
mod tests;

use corobench_model::{
    ANALYSIS_SCHEMA_VERSION, AnalysisSettings, Metric, MetricInfo, RunAnalysis, ScenarioAnalysis,
    StoredRun,
};

pub use across_machines::claims_across_machines;
pub use capacity_judging::{Judged, RateTally, judge};
pub use machine::normalise_by_probe;
pub use machine_kind::{machine_kind, newest_per_machine};
pub use precision::{median_precision, relative_half_width};
pub use runs::{compare_runs, compare_runs_gated};

/// How to analyse: the levels of the statistics and the baseline target.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalyzeOptions {
    /// The target every other target is compared with; `None`: the target
    /// of the run's first scenario.
    pub baseline: Option<String>,
    /// Significance level of the Mann–Whitney U test (benchstat: 0.05).
    pub alpha: f64,
    /// Confidence of the median intervals (benchstat: 0.95).
    pub confidence: f64,
    /// Confidence intervals wider than this fraction of their median are flagged.
    pub wide_ci_fraction: f64,
    /// Scale each trial's req/s by the median probe speed ÷ the trial's
    /// probe speed on the server CPUs before summarising.
    pub normalise_by_probe: bool,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        Self {
            baseline: None,
            alpha: 0.05,
            confidence: 0.95,
            wide_ci_fraction: 0.10,
            normalise_by_probe: false,
        }
    }
}

/// Why a run cannot be analysed as asked.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    #[error(
        "run {run_id} has no target {name} to compare with; use one of: {}",
        targets.join(", ")
    )]
    UnknownBaseline {
        name: String,
        run_id: String,
        targets: Vec<String>,
    },
}

/// Analyses one stored run: summaries of every scenario, comparisons with
/// the baseline target, sweeps and warnings.
///
/// # Errors
/// When `options.baseline` names a target the run does not have.
pub fn analyze_run(run: &StoredRun, options: &AnalyzeOptions) -> Result<RunAnalysis, AnalyzeError> {
    let baseline_target = baseline::choose_target(run, options.baseline.as_deref())?;
    let machine = machine::variation(run, options.normalise_by_probe, options.confidence);
    let normalised = options.normalise_by_probe.then(|| normalise_by_probe(run));
    let run = normalised.as_ref().unwrap_or(run);
    let mut notes = warnings::Warnings::default();
    let mut scenarios = scenarios::analyze_all(run, options, &mut notes, "");
    goal::note_goal(run.run.precision_goal, &mut scenarios, &mut notes);
    let mut comparisons = match &baseline_target {
        Some(target) => baseline::compare_with(&mut scenarios, target, options, &mut notes),
        None => Vec::new(),
    };
    comparisons.extend(baseline::protocol_variants(
        &mut scenarios,
        options,
        &mut notes,
    ));
    if let Some(variation) = &machine {
        machine::mark_within(variation, &comparisons, &mut scenarios, &mut notes);
        machine::note(variation, &mut notes);
    }
    let mut sweeps = sweeps::find(&scenarios);
    usl::fit_sweeps(&mut sweeps, &scenarios, options.confidence);
    let moved = wide::merge_alike(&mut notes, options);
    for scenario in &mut scenarios {
        let mut indices: Vec<usize> = Vec::new();
        for index in scenario.warnings.iter().map(|&i| moved[i]) {
            if !indices.contains(&index) {
                indices.push(index);
            }
        }
        scenario.warnings = indices;
    }
    let mut warnings = notes.into_list();
    machine::reword_wide_intervals(machine.as_ref(), &mut warnings);
    let capacity = capacity::analyze(
        run,
        &scenarios,
        baseline_target.as_deref(),
        (options.alpha, options.confidence),
    );
    let memory_per_connection = memory::memory_per_connection(run, &scenarios, options.confidence);
    Ok(RunAnalysis {
        schema_version: ANALYSIS_SCHEMA_VERSION,
        kind: "run_analysis".to_owned(),
        run: run.run.clone(),
        trials_per_scenario: run.trials_per_scenario,
        settings: settings(options, baseline_target),
        claims: claims::judge_all(&run.run.claims, &scenarios, options),
        capacity,
        metrics: metric_infos(&scenarios.iter().collect::<Vec<_>>()),
        scenarios,
        comparisons,
        sweeps,
        warnings,
        profiles: run.profiles.clone(),
        memory_per_connection,
        machine,
    })
}

/// The settings as recorded in an analysis.
fn settings(options: &AnalyzeOptions, baseline_target: Option<String>) -> AnalysisSettings {
    AnalysisSettings {
        alpha: options.alpha,
        confidence: options.confidence,
        wide_ci_fraction: options.wide_ci_fraction,
        baseline_target,
        normalise_by_probe: options.normalise_by_probe,
    }
}

/// The server metrics, then every figure a program reported in these scenarios.
fn metric_infos(scenarios: &[&ScenarioAnalysis]) -> Vec<MetricInfo> {
    let found: std::collections::BTreeSet<Metric> = scenarios
        .iter()
        .flat_map(|s| s.metrics.keys().copied())
        .collect();
    let programs = found.iter().filter(|m| matches!(m, Metric::Program(_)));
    let tls = Metric::TLS
        .into_iter()
        .chain([Metric::SERVER_CPU])
        .filter(|m| found.contains(m));
    Metric::ALL
        .into_iter()
        .chain(tls)
        .chain(programs.copied())
        .map(MetricInfo::from)
        .collect()
}
