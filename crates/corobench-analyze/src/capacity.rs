//! What a capacity run says: for each searched scenario, the rates tried
//! with their pass/fail counts and latency, the capacity with its interval
//! (a non-increasing step fit of the pass fraction against the rate over
//! every judged trial, with a bootstrap over trials:
//! `corobench_stats::estimate_step_capacity`), and
//! each target's capacity against the baseline target's as a ratio with
//! its interval and a bootstrap p-value.

use std::collections::BTreeMap;

use corobench_model::StoredRun;
use corobench_model::{
    CapacityAnalysis, CapacityComparison, CapacityEstimate, CapacityRate, CapacitySettings, Metric,
    RateVerdict, ScenarioAnalysis, ScenarioCapacity, ScenarioRecord, TrialRecord,
};
use corobench_stats::{StepCapacity, StepOptions, estimate_step_capacity, median};

use crate::capacity_judging::{RateTally, judge};

/// Fixed, so a report of the same run shows the same intervals every time.
const SEED: u64 = 0xCA9A_C17E;

/// The capacity analysis of a run that searched capacity; `None` otherwise.
pub(crate) fn analyze(
    run: &StoredRun,
    scenarios: &[ScenarioAnalysis],
    baseline: Option<&str>,
    (alpha, confidence): (f64, f64),
) -> Option<CapacityAnalysis> {
    let settings = run.run.capacity.as_ref()?;
    let options = StepOptions {
        confidence,
        seed: SEED,
        ..StepOptions::default()
    };
    let searches: Vec<Search> = group(run)
        .into_iter()
        .map(|(key, members)| Search::new(key, members, run, settings))
        .collect();
    let capacities: Vec<ScenarioCapacity> = searches
        .iter()
        .map(|s| s.capacity(scenarios, settings, &options))
        .collect();
    let comparisons = baseline.map_or_else(Vec::new, |target| {
        compare_with_baseline(&searches, target, &options, alpha)
    });
    Some(CapacityAnalysis {
        settings: settings.clone(),
        scenarios: capacities,
        comparisons,
    })
}

/// The key of the search a scenario belongs to: its key without the rate.
fn search_key(scenario: &ScenarioRecord) -> Option<String> {
    let rate = scenario.schedule().rate_per_s()?;
    Some(
        scenario
            .key
            .as_str()
            .replacen(&format!("/rate={rate}/"), "/", 1),
    )
}

/// Open-loop scenarios grouped by search, in the order each search first
/// appears in the plan.
fn group(run: &StoredRun) -> Vec<(String, Vec<&ScenarioRecord>)> {
    let mut groups: Vec<(String, Vec<&ScenarioRecord>)> = Vec::new();
    for scenario in &run.scenarios {
        let Some(key) = search_key(scenario) else {
            continue;
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(scenario),
            None => groups.push((key, vec![scenario])),
        }
    }
    groups
}

/// One search: its scenarios (one per rate) and every trial judged.
struct Search<'r> {
    key: String,
    target: String,
    /// Ascending by rate: scenario, its tally, its trials.
    rates: Vec<(&'r ScenarioRecord, RateTally, Vec<&'r TrialRecord>)>,
    /// (rate, passed) of every trial that passed or failed.
    judged: Vec<(f64, bool)>,
}

impl<'r> Search<'r> {
    fn new(
        key: String,
        members: Vec<&'r ScenarioRecord>,
        run: &'r StoredRun,
        settings: &CapacitySettings,
    ) -> Self {
        let target = members
            .first()
            .map_or_else(String::new, |s| s.target.clone());
        let mut rates: Vec<_> = members
            .into_iter()
            .map(|scenario| {
                let rate = scenario.schedule().rate_per_s().unwrap_or(0.0);
                let trials: Vec<&TrialRecord> = run
                    .trials
                    .iter()
                    .filter(|t| t.scenario_index == scenario.index)
                    .collect();
                let mut tally = RateTally::new(rate);
                for trial in &trials {
                    tally.add(judge(trial, settings));
                }
                (scenario, tally, trials)
            })
            .filter(|(_, _, trials)| !trials.is_empty())
            .collect();
        rates.sort_by(|a, b| a.1.rate.total_cmp(&b.1.rate));
        // Each rate's passes and failures, as the estimator takes them
        // (trials the generator could not drive, or that broke, left out).
        let judged = rates
            .iter()
            .flat_map(|(_, tally, _)| {
                std::iter::repeat_n((tally.rate, true), tally.passed as usize).chain(
                    std::iter::repeat_n((tally.rate, false), tally.failed as usize),
                )
            })
            .collect();
        Self {
            key,
            target,
            rates,
            judged,
        }
    }

    fn capacity(
        &self,
        scenarios: &[ScenarioAnalysis],
        settings: &CapacitySettings,
        options: &StepOptions,
    ) -> ScenarioCapacity {
        let rates: Vec<CapacityRate> = self
            .rates
            .iter()
            .map(|(scenario, tally, trials)| {
                rate_point(scenario, tally, trials, scenarios, settings)
            })
            .collect();
        let generator_limit = rates
            .iter()
            .find(|r| r.verdict == RateVerdict::GeneratorLimit)
            .map(|r| r.rate);
        ScenarioCapacity {
            key: self.key.clone(),
            target: self.target.clone(),
            estimate: estimate(&self.judged, generator_limit.is_some(), options),
            rates,
            generator_limit,
        }
    }
}

fn rate_point(
    scenario: &ScenarioRecord,
    tally: &RateTally,
    trials: &[&TrialRecord],
    scenarios: &[ScenarioAnalysis],
    settings: &CapacitySettings,
) -> CapacityRate {
    let analysed = scenarios
        .iter()
        .find(|s| s.scenario.index == scenario.index);
    let metric = |m: Metric| analysed.and_then(|s| s.metrics.get(&m).cloned());
    let achieved: Vec<f64> = trials
        .iter()
        .filter_map(|t| t.load.as_ref()?.open_loop.map(|o| o.achieved_rate_per_s))
        .collect();
    CapacityRate {
        rate: tally.rate,
        scenario_index: scenario.index,
        passed: tally.passed,
        failed: tally.failed,
        generator_limited: tally.limited,
        broken: tally.broken,
        verdict: tally.verdict(settings.trials_per_rate),
        p50_us: metric(Metric::LatencyP50Us),
        p99_us: metric(Metric::LatencyP99Us),
        p999_us: metric(Metric::LatencyP999Us),
        achieved_rate: median(&achieved).ok(),
    }
}

/// The capacity the judged trials support.
fn estimate(outcomes: &[(f64, bool)], limited: bool, options: &StepOptions) -> CapacityEstimate {
    if outcomes.is_empty() {
        return CapacityEstimate::NoTrials;
    }
    match estimate_step_capacity(outcomes, options) {
        Ok(StepCapacity::Located(c)) => CapacityEstimate::Estimated {
            estimate: c.estimate,
            lo: c.lo,
            hi: c.hi,
            confidence: c.confidence,
            between: [c.bracket.0, c.bracket.1],
            monotone: c.monotone,
        },
        Ok(StepCapacity::AtLeast { rate }) => CapacityEstimate::AtLeast {
            rate,
            generator_limit: limited,
        },
        Ok(StepCapacity::Below { rate }) => CapacityEstimate::Below { rate },
        Err(_) => CapacityEstimate::NoTrials,
    }
}

/// Every other target's searches against the baseline target's search of
/// the same workload and connections.
fn compare_with_baseline(
    searches: &[Search<'_>],
    baseline: &str,
    options: &StepOptions,
    alpha: f64,
) -> Vec<CapacityComparison> {
    let tail = |s: &Search<'_>| -> Option<String> {
        let scenario = s.rates.first()?.0;
        Some(format!(
            "{}/c={}{}",
            scenario.workload.name,
            scenario.connections,
            scenario.schedule().wire_text()
        ))
    };
    let bases: BTreeMap<String, &Search<'_>> = searches
        .iter()
        .filter(|s| s.target == baseline)
        .filter_map(|s| Some((tail(s)?, s)))
        .collect();
    searches
        .iter()
        .filter(|s| s.target != baseline)
        .filter_map(|s| {
            let base = bases.get(&tail(s)?)?;
            ratio(base, s, options, alpha)
        })
        .collect()
}

/// b / a from paired bootstrap draws (independent seeds per side).
fn ratio(
    a: &Search<'_>,
    b: &Search<'_>,
    options: &StepOptions,
    alpha: f64,
) -> Option<CapacityComparison> {
    let located = |s: &Search<'_>, seed: u64| {
        let outcomes = s.judged.clone();
        match estimate_step_capacity(&outcomes, &StepOptions { seed, ..*options }).ok()? {
            StepCapacity::Located(c) => Some(c),
            _ => None,
        }
    };
    let a_capacity = located(a, options.seed)?;
    let b_capacity = located(b, options.seed.wrapping_add(1))?;
    let mut ratios: Vec<f64> = a_capacity
        .draws
        .iter()
        .zip(&b_capacity.draws)
        .map(|(x, y)| y / x)
        .filter(|r| !r.is_nan())
        .collect();
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    let tail = (1.0 - options.confidence) / 2.0;
    let below = ratios.iter().filter(|r| **r <= 1.0).count() as f64 / ratios.len() as f64;
    let p_value = (2.0 * below.min(1.0 - below)).clamp(0.0, 1.0);
    let (lo, hi) = (at(tail), at(1.0 - tail));
    Some(CapacityComparison {
        a: a.key.clone(),
        b: b.key.clone(),
        ratio: b_capacity.estimate / a_capacity.estimate,
        lo,
        hi,
        confidence: options.confidence,
        p_value,
        significant: p_value <= alpha && (lo > 1.0 || hi < 1.0),
    })
}
