//! Warnings that tell the reader what to do. Scenarios with the same message
//! share one warning, so a report lists each problem once, with every
//! scenario it concerns.

use corobench_model::{
    Metric, MetricSummary, ScenarioRecord, ScheduleKind, TrialFlag, TrialRecord, TrialStatus,
    Warning, WarningKind,
};
use corobench_stats::{min_attainable_p, min_samples_for_median_ci, min_samples_to_detect};

use super::AnalyzeOptions;

/// The warnings of one analysis, deduplicated by kind and message.
#[derive(Debug, Default)]
pub(crate) struct Warnings {
    list: Vec<Warning>,
    /// What starts each warning's message (`run A (…): ` in a comparison).
    prefixes: Vec<String>,
}

/// A warning about one scenario, before it meets the same warning of others.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Found {
    pub(crate) kind: WarningKind,
    /// What it is and what to do: the same for every scenario it concerns.
    pub(crate) message: String,
    /// What it found in this scenario (`in 3 of 6 trials`), if more.
    pub(crate) detail: Option<String>,
    /// The metrics it is about; empty for the scenario as a whole.
    pub(crate) metrics: Vec<Metric>,
}

impl Found {
    pub(crate) fn new(kind: WarningKind, message: String) -> Self {
        Self {
            kind,
            message,
            detail: None,
            metrics: Vec::new(),
        }
    }

    pub(crate) fn detail(self, detail: String) -> Self {
        Self {
            detail: Some(detail),
            ..self
        }
    }

    pub(crate) fn about(self, metrics: Vec<Metric>) -> Self {
        Self { metrics, ..self }
    }
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
        self.add_found(Found::new(kind, message), scenario_key)
    }

    /// Adds what was found in `scenario_key` (or the whole run when
    /// `None`); the same kind and message share one warning, which keeps
    /// each scenario's detail.
    pub(crate) fn add_found(&mut self, found: Found, scenario_key: Option<&str>) -> usize {
        self.add_prefixed(found, "", scenario_key)
    }

    /// [`Warnings::add_found`] with `prefix` before the message.
    pub(crate) fn add_prefixed(
        &mut self,
        found: Found,
        prefix: &str,
        scenario_key: Option<&str>,
    ) -> usize {
        let message = format!("{prefix}{}", found.message);
        let index = match self
            .list
            .iter()
            .position(|w| w.kind == found.kind && w.message == message)
        {
            Some(index) => index,
            None => {
                let mut warning = Warning::new(found.kind, message);
                warning.metrics = found.metrics;
                self.list.push(warning);
                self.prefixes.push(prefix.to_owned());
                self.list.len() - 1
            }
        };
        let warning = &mut self.list[index];
        if let Some(key) = scenario_key {
            if !warning.scenarios.iter().any(|s| s == key) {
                warning.scenarios.push(key.to_owned());
            }
            if let Some(detail) = found.detail {
                warning.details.entry(key.to_owned()).or_insert(detail);
            }
        }
        index
    }

    pub(crate) fn into_list(self) -> Vec<Warning> {
        self.list
    }

    /// The warnings and their prefixes, to be rearranged together.
    pub(crate) fn parts_mut(&mut self) -> (&mut Vec<Warning>, &mut Vec<String>) {
        (&mut self.list, &mut self.prefixes)
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
    let mut found: Vec<Found> = Vec::new();
    found.extend(trial_count_warnings(facts));
    found.extend(too_few_for_ci(facts.ok, options));
    found.extend(super::wide::wide_intervals(facts.metrics, options));
    found.extend(flag_warnings(facts));
    found.extend(super::counter_warnings::missing_counters(facts));
    found.extend(super::cpu_split::below_resolution(facts.trials));
    let key = Some(facts.scenario.key.as_str());
    let mut indices: Vec<usize> = found
        .into_iter()
        .map(|f| warnings.add_prefixed(f, facts.prefix, key))
        .collect();
    indices.dedup();
    indices
}

fn trial_count_warnings(facts: &ScenarioFacts<'_>) -> Vec<Found> {
    let mut found = Vec::new();
    let measured = facts.trials.len();
    let failed: Vec<&&TrialRecord> = facts
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Failed)
        .collect();
    if let Some(first) = failed.first() {
        let reason = first.failure.as_deref().unwrap_or("no reason was recorded");
        found.push(
            Found::new(
                WarningKind::FailedTrials,
                "trials failed and are left out; fix what the first failure names, then rerun"
                    .to_owned(),
            )
            .detail(format!(
                "{} of {measured} trials, first: {}",
                failed.len(),
                corobench_model::failure_line(reason)
            )),
        );
    }
    let planned = facts.trials_planned as usize;
    if measured < planned {
        found.push(
            Found::new(
                WarningKind::MissingTrials,
                "fewer trials were measured than planned: the run was interrupted or is still \
                 going; `corobench run --resume` finishes it"
                    .to_owned(),
            )
            .detail(format!("{measured} of {planned}")),
        );
    }
    found
}

fn too_few_for_ci(ok: usize, options: &AnalyzeOptions) -> Option<Found> {
    let needed = min_samples_for_median_ci(options.confidence)
        .ok()
        .flatten()?;
    (ok > 0 && ok < needed).then(|| {
        Found::new(
            WarningKind::TooFewTrialsForCi,
            format!(
                "fewer than {needed} trials give no {} confidence interval (n<{needed} in the \
                 table): rerun with --trials {needed}",
                percent(options.confidence)
            ),
        )
        .detail(format!("{ok} trials"))
    })
}

/// The advice of a wide interval, unless the machine-speed probe showed
/// the machine was steady ([`STEADY_MACHINE`] then replaces it).
pub(crate) const QUIET_THE_MACHINE: &str =
    "quiet the machine (no other load, a fixed CPU frequency) or add trials";

/// The advice of a wide interval when the machine's speed was steady.
pub(crate) const STEADY_MACHINE: &str =
    "the machine-speed probe was steady, so the servers themselves varied: add trials";

fn flag_warnings(facts: &ScenarioFacts<'_>) -> Vec<Found> {
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
        found.push(
            Found::new(
                WarningKind::GeneratorBound,
                "generator-bound: the generator, not the target, was the limit; give the \
                 generator more cores (generator_cpus in the spec) or use fewer connections"
                    .to_owned(),
            )
            .detail(format!("in {bound} of {n} trials")),
        );
    }
    found.extend(schedule_missed(&ok));
    found.extend(schedule_not_kept(&ok));
    found.extend(background_unanswered(&ok));
    found.extend(littles_law(facts.scenario, &ok));
    found.extend(crate::reconnects::closed_connections(facts.scenario, &ok));
    found.extend(crate::slow_stop::killed_at_stop(&ok));
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

fn schedule_missed(ok: &[&TrialRecord]) -> Option<Found> {
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
    Some(
        Found::new(
            WarningKind::ScheduleMissed,
            "open-loop schedule missed: the offered load was lower than planned; lower the \
             rate or give the generator more threads and cores"
                .to_owned(),
        )
        .detail(format!(
            "in {} of {} trials, as little as {:.0} of {:.0} req/s sent",
            missed.len(),
            ok.len(),
            worst.1,
            worst.0
        )),
    )
}

/// Trials whose background request (HTTP/2, a workload's `background`)
/// was never answered in the window: the scenario measured the fast
/// streams alone, so its comparison with the scenario without the
/// background says nothing of head-of-line blocking.
fn background_unanswered(ok: &[&TrialRecord]) -> Option<Found> {
    let unanswered = ok
        .iter()
        .filter(|t| {
            t.load.as_ref().is_some_and(|l| {
                l.warnings
                    .iter()
                    .any(|w| matches!(w, corobench_model::LoadWarning::BackgroundUnanswered { .. }))
            })
        })
        .count();
    (unanswered > 0).then(|| {
        Found::new(
            WarningKind::BackgroundUnanswered,
            "the background request was never answered in the window: nothing ran beside the \
             measured streams, so the comparison with the same target without it says nothing \
             of head-of-line blocking; check that the workload's background path answers \
             below 400 within the timeout"
                .to_owned(),
        )
        .detail(format!("in {unanswered} of {} trials", ok.len()))
    })
}

/// Trials flagged `schedule not kept`: a request left later than the bound
/// after its intended send time, so the corrected latency may describe the
/// generator's lag rather than the target.
fn schedule_not_kept(ok: &[&TrialRecord]) -> Option<Found> {
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
    Some(
        Found::new(
            WarningKind::ScheduleNotKept,
            format!(
                "open-loop schedule not kept (a request left more than {:.0} ms after its \
                 intended send time): the corrected latency may describe the generator or too \
                 few connections rather than the target; add connections, give the generator \
                 more threads and cores, or warm up longer",
                bound as f64 / 1000.0
            ),
        )
        .detail(format!(
            "in {} of {} trials, up to {:.1} ms late",
            lags.len(),
            ok.len(),
            worst as f64 / 1000.0,
        )),
    )
}

/// How far a closed loop's req/s may stray from connections ÷ mean latency.
const LITTLE_TOLERANCE: f64 = 0.05;

/// Little's law for a closed loop: with every connection (every HTTP/2
/// stream) always waiting for an answer, req/s = connections × streams ÷
/// mean latency. A trial below it
/// spent time between an answer and the next request — the generator, not
/// the server, shaped it — or lost connections; one above it counted
/// answers that no request of its window asked for.
fn littles_law(scenario: &ScenarioRecord, ok: &[&TrialRecord]) -> Option<Found> {
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
            let implied = f64::from(load.connections) * clients_per_connection(load) / mean_s;
            let stray = implied / load.requests_per_s - 1.0;
            (mean_s > 0.0 && load.requests_per_s > 0.0 && stray.abs() > LITTLE_TOLERANCE)
                .then_some(stray)
        })
        .collect();
    let worst = strays
        .iter()
        .copied()
        .max_by(|a, b| a.abs().total_cmp(&b.abs()))?;
    // Connections ÷ mean latency below the measured req/s (a negative
    // stray) is more than the connections could carry: answers were counted
    // that belong to no request of the window, as runs measured before only
    // requests sent in the window counted did at its edges. Above it, the
    // connections sat idle between an answer and the next request.
    let message = if worst < 0.0 {
        "Little's law does not hold: the measured req/s is above what the connections can \
         carry (connections ÷ mean latency), so answers to requests sent before the window \
         were counted in it, as corobench did before it counted only the requests sent in \
         the window; measure the scenario again"
    } else {
        "Little's law does not hold: the measured req/s is below connections ÷ mean latency, \
         so connections sat idle between an answer and the next request: the generator was \
         short of CPU, or connections were closed and opened again; give the generator \
         more cores or fewer connections"
    };
    Some(
        Found::new(WarningKind::LittlesLaw, message.to_owned()).detail(format!(
            "in {} of {} trials, up to {:+.0}%",
            strays.len(),
            ok.len(),
            worst * 100.0
        )),
    )
}

/// The law's waiting clients on one connection: one request at a time
/// over HTTP/1.1; over HTTP/2, the streams the generator kept in flight
/// (it reopens them in batches, so fewer than it may keep), or the streams
/// it could keep where a record has no in-flight mean.
fn clients_per_connection(load: &corobench_model::LoadReport) -> f64 {
    load.http2.as_ref().map_or(1.0, |h2| {
        if h2.streams_in_flight_mean > 0.0 {
            h2.streams_in_flight_mean
        } else {
            f64::from(h2.streams_effective.max(1))
        }
    })
}

/// A server measured where it already ran: no trial started it fresh.
fn already_running(ok: &[&TrialRecord]) -> Option<Found> {
    let url = ok.iter().flat_map(|t| &t.flags).find_map(|f| match f {
        TrialFlag::AlreadyRunning { url } => Some(url),
        _ => None,
    })?;
    Some(Found::new(
        WarningKind::NotFresh,
        format!(
            "already running at {url}: not started fresh for each trial, so every trial found \
             what the earlier ones left (warm caches and pools, a grown heap, a compiled JIT); \
             compare it with a server started fresh only with that in mind, or give a command \
             so that corobench starts it"
        ),
    ))
}

fn leaks(ok: &[&TrialRecord]) -> Option<Found> {
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
    Some(
        Found::new(
            WarningKind::Leak,
            "possible leak: threads, tasks or memory did not return to the pre-load baseline; \
             look for stuck connections or unbounded queues in the target"
                .to_owned(),
        )
        .detail(format!("in {leaking} of {} trials, {first}", ok.len())),
    )
}

fn errors(ok: &[&TrialRecord]) -> Option<Found> {
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
        Found::new(
            WarningKind::Errors,
            "requests failed: failed requests count in the figures, so find out why before \
             comparing"
                .to_owned(),
        )
        .detail(format!(
            "in {} of {} trials, up to {:.2}%: {}",
            rates.len(),
            ok.len(),
            worst * 100.0,
            named.join(", ")
        ))
    })
}

/// A comparison whose sample sizes cannot reach significance at alpha.
pub(crate) fn too_few_to_detect(
    n_baseline: usize,
    n: usize,
    options: &AnalyzeOptions,
) -> Option<Found> {
    let smallest_p = min_attainable_p(n_baseline, n).ok()?;
    if smallest_p <= options.alpha {
        return None;
    }
    let needed = min_samples_to_detect(options.alpha).ok().flatten()?;
    Some(
        Found::new(
            WarningKind::TooFewTrialsToDetect,
            format!(
                "too few trials for any difference to be significant at alpha {}: rerun with \
                 --trials {needed} or more",
                options.alpha
            ),
        )
        .detail(format!(
            "{n_baseline}+{n} trials, the smallest possible p is {smallest_p:.3}"
        )),
    )
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
