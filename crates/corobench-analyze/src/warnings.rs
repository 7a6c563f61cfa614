//! Warnings that tell the reader what to do. Scenarios with the same message
//! share one warning, so a report lists each problem once, with every
//! scenario it concerns.

use corobench_model::{
    Metric, MetricSummary, ScenarioRecord, ScheduleKind, TrialFlag, TrialRecord, TrialStatus,
    Warning, WarningKind,
};
use corobench_stats::{min_attainable_p, min_samples_for_median_ci, min_samples_to_detect};

use super::AnalyzeOptions;
use super::precision::relative_half_width;

/// The warnings of one analysis, deduplicated by kind and message.
#[derive(Debug, Default)]
pub(crate) struct Warnings {
    list: Vec<Warning>,
}

impl Warnings {
    /// Adds a warning about `scenario_key` (or the whole run when `None`)
    /// and returns its index, shared with earlier warnings of the same text.
    pub(crate) fn add(
        &mut self,
        kind: WarningKind,
        message: String,
        scenario_key: Option<&str>,
    ) -> usize {
        let index = match self
            .list
            .iter()
            .position(|w| w.kind == kind && w.message == message)
        {
            Some(index) => index,
            None => {
                self.list.push(Warning {
                    kind,
                    message,
                    scenarios: Vec::new(),
                });
                self.list.len() - 1
            }
        };
        let scenarios = &mut self.list[index].scenarios;
        if let Some(key) = scenario_key.filter(|key| !scenarios.iter().any(|s| s == key)) {
            scenarios.push(key.to_owned());
        }
        index
    }

    pub(crate) fn into_list(self) -> Vec<Warning> {
        self.list
    }
}

/// What one scenario's trials tell about how far its figures can be trusted.
pub(crate) struct ScenarioFacts<'a> {
    pub(crate) scenario: &'a ScenarioRecord,
    pub(crate) trials: &'a [&'a TrialRecord],
    pub(crate) trials_planned: u32,
    pub(crate) ok: usize,
    pub(crate) metrics: &'a std::collections::BTreeMap<Metric, MetricSummary>,
    /// Prepended to every message, e.g. `run A: ` in a comparison of runs.
    pub(crate) prefix: &'a str,
}

/// Every warning about one scenario; returns their indices.
pub(crate) fn scenario_warnings(
    facts: &ScenarioFacts<'_>,
    options: &AnalyzeOptions,
    warnings: &mut Warnings,
) -> Vec<usize> {
    let mut found: Vec<(WarningKind, String)> = Vec::new();
    found.extend(trial_count_warnings(facts));
    found.extend(too_few_for_ci(facts.ok, options));
    found.extend(wide_intervals(facts.metrics, options));
    found.extend(flag_warnings(facts));
    found.extend(super::counter_warnings::missing_counters(facts));
    let key = Some(facts.scenario.key.as_str());
    let mut indices: Vec<usize> = found
        .into_iter()
        .map(|(kind, message)| warnings.add(kind, format!("{}{message}", facts.prefix), key))
        .collect();
    indices.dedup();
    indices
}

fn trial_count_warnings(facts: &ScenarioFacts<'_>) -> Vec<(WarningKind, String)> {
    let mut found = Vec::new();
    let measured = facts.trials.len();
    let failed: Vec<&&TrialRecord> = facts
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Failed)
        .collect();
    if let Some(first) = failed.first() {
        let reason = first.failure.as_deref().unwrap_or("no reason was recorded");
        found.push((
            WarningKind::FailedTrials,
            format!(
                "{} of {measured} trials failed and are left out (first failure: {}); \
                 fix what it names, then rerun",
                failed.len(),
                corobench_model::failure_line(reason)
            ),
        ));
    }
    let planned = facts.trials_planned as usize;
    if measured < planned {
        found.push((
            WarningKind::MissingTrials,
            format!(
                "{measured} of {planned} planned trials were measured: the run was interrupted \
                 or is still going; `corobench run --resume` finishes it"
            ),
        ));
    }
    found
}

fn too_few_for_ci(ok: usize, options: &AnalyzeOptions) -> Option<(WarningKind, String)> {
    let needed = min_samples_for_median_ci(options.confidence)
        .ok()
        .flatten()?;
    (ok > 0 && ok < needed).then(|| {
        (
            WarningKind::TooFewTrialsForCi,
            format!(
                "need ≥ {needed} trials for a {} confidence interval, have {ok}: \
                 rerun with --trials {needed}",
                percent(options.confidence)
            ),
        )
    })
}

fn wide_intervals(
    metrics: &std::collections::BTreeMap<Metric, MetricSummary>,
    options: &AnalyzeOptions,
) -> Option<(WarningKind, String)> {
    let wide: Vec<&str> = metrics
        .iter()
        .filter(|(metric, _)| **metric != Metric::ErrorRate)
        .filter(|(_, s)| {
            relative_half_width(s).is_some_and(|spread| spread > options.wide_ci_fraction)
        })
        .map(|(metric, _)| metric.label())
        .collect();
    let (last, rest) = wide.split_last()?;
    let (names, verb, noun) = if rest.is_empty() {
        ((*last).to_owned(), "is", "interval")
    } else {
        (
            format!("{} and {last}", rest.join(", ")),
            "are",
            "intervals",
        )
    };
    Some((
        WarningKind::WideCi,
        format!(
            "the {} confidence {noun} of {names} {verb} wider than ±{} of the median: the \
             trials disagree; {QUIET_THE_MACHINE}",
            percent(options.confidence),
            percent(options.wide_ci_fraction)
        ),
    ))
}

/// The advice of a wide interval, unless the machine-speed probe showed
/// the machine was steady ([`STEADY_MACHINE`] then replaces it).
pub(crate) const QUIET_THE_MACHINE: &str =
    "quiet the machine (no other load, a fixed CPU frequency) or add trials";

/// The advice of a wide interval when the machine's speed was steady.
pub(crate) const STEADY_MACHINE: &str =
    "the machine-speed probe was steady, so the servers themselves varied: add trials";

fn flag_warnings(facts: &ScenarioFacts<'_>) -> Vec<(WarningKind, String)> {
    let ok: Vec<&TrialRecord> = facts
        .trials
        .iter()
        .copied()
        .filter(|t| t.status == TrialStatus::Ok)
        .collect();
    let n = ok.len();
    let mut found = Vec::new();
    let bound = ok.iter().filter(|t| is_generator_bound(t)).count();
    if bound > 0 {
        found.push((
            WarningKind::GeneratorBound,
            format!(
                "generator-bound in {bound} of {n} trials: the generator, not the target, was \
                 the limit; give the generator more cores (generator_cpus in the spec) or use \
                 fewer connections"
            ),
        ));
    }
    found.extend(schedule_missed(&ok));
    found.extend(schedule_not_kept(&ok));
    found.extend(littles_law(facts.scenario, &ok));
    found.extend(leaks(&ok));
    found.extend(errors(&ok));
    found.extend(already_running(&ok));
    found
}

fn is_generator_bound(trial: &TrialRecord) -> bool {
    trial
        .flags
        .iter()
        .any(|f| matches!(f, TrialFlag::GeneratorBound { .. }))
        || trial.load.as_ref().is_some_and(|l| l.generator_bound())
}

fn schedule_missed(ok: &[&TrialRecord]) -> Option<(WarningKind, String)> {
    let missed: Vec<(f64, f64)> = ok
        .iter()
        .filter_map(|t| t.load.as_ref())
        .flat_map(|l| &l.warnings)
        .filter_map(|w| match *w {
            corobench_model::LoadWarning::ScheduleMissed {
                requested_rate_per_s,
                achieved_rate_per_s,
            } => Some((requested_rate_per_s, achieved_rate_per_s)),
            _ => None,
        })
        .collect();
    let worst = missed.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1))?;
    Some((
        WarningKind::ScheduleMissed,
        format!(
            "open-loop schedule missed in {} of {} trials (as little as {:.0} of {:.0} req/s \
             sent): the offered load was lower than planned; lower the rate or give the \
             generator more threads and cores",
            missed.len(),
            ok.len(),
            worst.1,
            worst.0
        ),
    ))
}

/// Trials flagged `schedule not kept`: a request left later than the bound
/// after its intended send time, so the corrected latency may describe the
/// generator's lag rather than the target.
fn schedule_not_kept(ok: &[&TrialRecord]) -> Option<(WarningKind, String)> {
    let lags: Vec<(u64, u64)> = ok
        .iter()
        .flat_map(|t| &t.flags)
        .filter_map(|f| match *f {
            TrialFlag::ScheduleNotKept {
                max_send_lag_us,
                bound_us,
            } => Some((max_send_lag_us, bound_us)),
            _ => None,
        })
        .collect();
    let (worst, bound) = lags.iter().copied().max()?;
    Some((
        WarningKind::ScheduleNotKept,
        format!(
            "open-loop schedule not kept in {} of {} trials (a request left up to {:.1} ms \
             after its intended send time, more than {:.0} ms): the corrected latency may \
             describe the generator or too few connections rather than the target; add \
             connections, give the generator more threads and cores, or warm up longer",
            lags.len(),
            ok.len(),
            worst as f64 / 1000.0,
            bound as f64 / 1000.0
        ),
    ))
}

/// How far a closed loop's req/s may stray from connections ÷ mean latency.
const LITTLE_TOLERANCE: f64 = 0.05;

/// Little's law for a closed loop: with every connection always waiting
/// for an answer, req/s = connections ÷ mean latency. A trial where they
/// disagree by more than a few percent spent time between an answer and the
/// next request — the generator, not the server, shaped it — or lost
/// connections.
fn littles_law(scenario: &ScenarioRecord, ok: &[&TrialRecord]) -> Option<(WarningKind, String)> {
    // A pipelined connection holds anywhere from 1 to its depth of
    // requests, as its batches go and come back: the law then fixes no
    // req/s from the connection count.
    if scenario.program.is_some()
        || scenario.schedule != ScheduleKind::Closed
        || scenario.wire.pipeline > 1
    {
        return None;
    }
    let strays: Vec<f64> = ok
        .iter()
        .filter_map(|t| t.load.as_ref())
        .filter_map(|load| {
            let mean_s = load.latency.summary.mean_us / 1e6;
            let implied = f64::from(load.connections) / mean_s;
            let stray = implied / load.requests_per_s - 1.0;
            (mean_s > 0.0 && load.requests_per_s > 0.0 && stray.abs() > LITTLE_TOLERANCE)
                .then_some(stray)
        })
        .collect();
    let worst = strays
        .iter()
        .copied()
        .max_by(|a, b| a.abs().total_cmp(&b.abs()))?;
    Some((
        WarningKind::LittlesLaw,
        format!(
            "Little's law does not hold in {} of {} trials: connections ÷ mean latency is {:+.0}% \
             off the measured req/s, so time passed between an answer and the next request (a \
             busy generator) or connections were lost; give the generator more cores or fewer \
             connections",
            strays.len(),
            ok.len(),
            worst * 100.0
        ),
    ))
}

/// A server measured where it already ran: no trial started it fresh.
fn already_running(ok: &[&TrialRecord]) -> Option<(WarningKind, String)> {
    let url = ok.iter().flat_map(|t| &t.flags).find_map(|f| match f {
        TrialFlag::AlreadyRunning { url } => Some(url),
        _ => None,
    })?;
    Some((
        WarningKind::NotFresh,
        format!(
            "already running at {url}: not started fresh for each trial, so every trial found \
             what the earlier ones left (warm caches and pools, a grown heap, a compiled JIT); \
             compare it with a server started fresh only with that in mind, or give a command \
             so that corobench starts it"
        ),
    ))
}

fn leaks(ok: &[&TrialRecord]) -> Option<(WarningKind, String)> {
    let what: Vec<&str> = ok
        .iter()
        .flat_map(|t| &t.flags)
        .filter_map(|f| match f {
            TrialFlag::Leak { what } => Some(what.as_str()),
            _ => None,
        })
        .collect();
    let leaking = ok
        .iter()
        .filter(|t| t.flags.iter().any(|f| matches!(f, TrialFlag::Leak { .. })))
        .count();
    let first = what.first()?;
    Some((
        WarningKind::Leak,
        format!(
            "possible leak in {leaking} of {} trials ({first}): threads, tasks or memory did \
             not return to the pre-load baseline; look for stuck connections or unbounded \
             queues in the target",
            ok.len()
        ),
    ))
}

fn errors(ok: &[&TrialRecord]) -> Option<(WarningKind, String)> {
    let rates: Vec<f64> = ok
        .iter()
        .filter_map(|t| t.load.as_ref())
        .map(|l| l.error_rate)
        .filter(|rate| *rate > 0.0)
        .collect();
    let worst = rates.iter().copied().fold(0.0, f64::max);
    let mut kinds = corobench_model::ErrorCounts::default();
    for load in ok.iter().filter_map(|t| t.load.as_ref()) {
        kinds.add(&load.errors);
    }
    let named: Vec<String> = kinds
        .by_kind()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, n)| format!("{n} {kind}"))
        .collect();
    (!rates.is_empty()).then(|| {
        (
            WarningKind::Errors,
            format!(
                "requests failed in {} of {} trials (up to {:.2}%; {}): failed requests \
                 count in the figures, so find out why before comparing",
                rates.len(),
                ok.len(),
                worst * 100.0,
                named.join(", ")
            ),
        )
    })
}

/// A comparison whose sample sizes cannot reach significance at alpha.
pub(crate) fn too_few_to_detect(
    n_baseline: usize,
    n: usize,
    options: &AnalyzeOptions,
) -> Option<(WarningKind, String)> {
    let smallest_p = min_attainable_p(n_baseline, n).ok()?;
    if smallest_p <= options.alpha {
        return None;
    }
    let needed = min_samples_to_detect(options.alpha).ok().flatten()?;
    Some((
        WarningKind::TooFewTrialsToDetect,
        format!(
            "with {n_baseline}+{n} trials no difference can be significant at alpha {} \
             (the smallest possible p is {smallest_p:.3}): rerun with --trials {needed} or more",
            options.alpha
        ),
    ))
}

/// `0.95` → `95%`, `0.1` → `10%`.
pub(crate) fn percent(fraction: f64) -> String {
    let pct = fraction * 100.0;
    if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0}%")
    } else {
        format!("{pct}%")
    }
}
