//! A capacity run (`[capacity]`): for every scenario of the plan, the
//! search of [`search`] walks open-loop rates, one trial at a time. The
//! scenarios take turns, round by round in a seeded order, as in every run,
//! so drift of the machine hits them alike. Each rate tried is a scenario of
//! its own (the plan's scenario with that rate in its schedule and key),
//! added to the store the first time it is run, so every report shows the
//! latency at each rate like any other row.

pub mod search;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};

use corobench_model::{CapacitySettings, TrialRecord, TrialStatus};
use corobench_spec::{Plan, PlannedScenario, at_rate};

use self::search::{Finish, Next, RateTally};
use crate::error::EngineError;
use crate::events::{RunEvent, RunObserver};
use crate::order::{self, TrialSlot};
use crate::rounds::{RunTally, TrialExecutor, TrialOutcome};

/// Where a capacity run keeps what it finds.
pub trait CapacitySink {
    /// A rate tried for the first time: its scenario, before its first trial.
    ///
    /// # Errors
    /// The store refused it: the run stops.
    fn add_scenario(&mut self, scenario: &PlannedScenario) -> Result<(), EngineError>;

    /// A trial as it ended.
    ///
    /// # Errors
    /// The store refused it: the run stops.
    fn keep(&mut self, record: &TrialRecord) -> Result<(), EngineError>;
}

/// A scenario of the run and the plan's scenario it searches for.
#[derive(Clone, Debug)]
pub struct RateScenario {
    pub scenario: PlannedScenario,
    /// Index of the plan's scenario (the search) it belongs to.
    pub search: u32,
}

/// What a capacity run works on.
pub struct CapacityRun<'a> {
    pub plan: &'a Plan,
    pub settings: &'a CapacitySettings,
    /// The plan's scenarios whose target was built and verified.
    pub runnable: Vec<u32>,
    /// Scenarios a resumed run added before (beyond the plan's own).
    pub added: Vec<RateScenario>,
    pub stop: &'a AtomicBool,
    pub observer: &'a dyn RunObserver,
}

impl std::fmt::Debug for CapacityRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CapacityRun")
            .field("plan", &self.plan.name)
            .field("runnable", &self.runnable)
            .finish_non_exhaustive()
    }
}

/// How a capacity run went.
#[derive(Debug, Default, PartialEq)]
pub struct CapacityTally {
    pub tally: RunTally,
    /// Why each search ended, by the plan's scenario index; a search the
    /// run left unfinished (Ctrl-C) is absent.
    pub finished: Vec<(u32, Finish)>,
}

/// A search (by the plan's scenario index) and the rate of its next trial.
type Wanted = (u32, f64);

/// The searches' state: every scenario, and every trial's judgement.
struct Ladders {
    scenarios: Vec<RateScenario>,
    /// Trials held per scenario index (all of them, broken ones included).
    trials: Vec<u32>,
    tallies: Vec<RateTally>,
}

impl Ladders {
    fn new(plan: &Plan, added: &[RateScenario]) -> Self {
        let mut scenarios: Vec<RateScenario> = plan
            .scenarios
            .iter()
            .map(|s| RateScenario {
                scenario: s.clone(),
                search: s.index,
            })
            .collect();
        scenarios.extend(added.iter().cloned());
        let tallies = scenarios
            .iter()
            .map(|s| RateTally::new(s.scenario.schedule.rate_per_s().unwrap_or(0.0)))
            .collect();
        Self {
            trials: vec![0; scenarios.len()],
            scenarios,
            tallies,
        }
    }

    fn record(&mut self, record: &TrialRecord, settings: &CapacitySettings) {
        let index = record.scenario_index as usize;
        if let (Some(count), Some(tally)) =
            (self.trials.get_mut(index), self.tallies.get_mut(index))
        {
            *count += 1;
            tally.add(search::judge(record, settings));
        }
    }

    /// The rates a search has tried: only those with trials, so a rate
    /// stored just before an interruption is tried again, not skipped.
    fn tried(&self, search: u32) -> Vec<RateTally> {
        self.scenarios
            .iter()
            .zip(&self.tallies)
            .zip(&self.trials)
            .filter(|((s, _), trials)| s.search == search && **trials > 0)
            .map(|((_, tally), _)| *tally)
            .collect()
    }

    /// The scenario of `search` at `rate`, if there is one.
    fn at(&self, search: u32, rate: f64) -> Option<u32> {
        self.scenarios
            .iter()
            .position(|s| s.search == search && s.scenario.schedule.rate_per_s() == Some(rate))
            .and_then(|i| u32::try_from(i).ok())
    }
}

impl CapacityRun<'_> {
    /// Runs every search to its end (or to Ctrl-C), handing scenarios and
    /// trials to `sink` as they come; `before` are the trials a resumed run
    /// holds.
    ///
    /// # Errors
    /// The sink refused a scenario or a trial: the run stops at once.
    pub fn run(
        &self,
        executor: &dyn TrialExecutor,
        before: &[TrialRecord],
        sink: &mut dyn CapacitySink,
    ) -> Result<CapacityTally, EngineError> {
        let mut ladders = Ladders::new(self.plan, &self.added);
        for record in before {
            ladders.record(record, self.settings);
        }
        let mut ended = CapacityTally::default();
        let mut sequence = u32::try_from(before.len()).unwrap_or(u32::MAX);
        let mut round = 0;
        loop {
            let (active, finished) = self.step(&ladders);
            ended.finished = finished;
            if active.is_empty() {
                return Ok(ended);
            }
            let ids: Vec<u32> = active.iter().map(|(search, _)| *search).collect();
            for slot in order::round(&ids, round, self.plan.seed, &BTreeSet::new()) {
                let rate = active
                    .iter()
                    .find(|(search, _)| *search == slot.scenario)
                    .map_or(0.0, |(_, rate)| *rate);
                let step = (slot.scenario, rate, sequence);
                if !self.run_one(executor, step, &mut ladders, sink, &mut ended.tally)? {
                    ended.tally.interrupted = true;
                    return Ok(ended);
                }
                sequence = sequence.saturating_add(1);
            }
            round += 1;
        }
    }

    /// The searches that want a trial (with its rate), and those done.
    fn step(&self, ladders: &Ladders) -> (Vec<Wanted>, Vec<(u32, Finish)>) {
        let (mut active, mut finished) = (Vec::new(), Vec::new());
        for &search in &self.runnable {
            match search::next(&ladders.tried(search), self.settings) {
                Next::Trial(rate) => active.push((search, rate)),
                Next::Done(finish) => finished.push((search, finish)),
            }
        }
        (active, finished)
    }

    /// One trial of `search` at `rate`; `Ok(false)` when Ctrl-C came first.
    fn run_one(
        &self,
        executor: &dyn TrialExecutor,
        (search, rate, sequence): (u32, f64, u32),
        ladders: &mut Ladders,
        sink: &mut dyn CapacitySink,
        tally: &mut RunTally,
    ) -> Result<bool, EngineError> {
        if self.stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let index = match ladders.at(search, rate) {
            Some(index) => index,
            None => self.add_rate(search, rate, ladders, sink)?,
        };
        let scenario = &ladders.scenarios[index as usize].scenario;
        let slot = TrialSlot {
            scenario: index,
            trial: ladders.trials[index as usize],
        };
        self.observer.on(RunEvent::TrialStarted { scenario, slot });
        let TrialOutcome::Ended(record) =
            executor.run_trial(scenario, slot, sequence, self.observer)
        else {
            return Ok(false);
        };
        sink.keep(&record)?;
        self.observer.on(RunEvent::TrialEnded {
            scenario,
            record: &record,
        });
        tally.stored += 1;
        tally.failed += u32::from(record.status == TrialStatus::Failed);
        ladders.record(&record, self.settings);
        Ok(true)
    }

    /// A new rate for `search`: a scenario stored before its first trial.
    fn add_rate(
        &self,
        search: u32,
        rate: f64,
        ladders: &mut Ladders,
        sink: &mut dyn CapacitySink,
    ) -> Result<u32, EngineError> {
        let index = u32::try_from(ladders.scenarios.len()).unwrap_or(u32::MAX);
        let base = &self.plan.scenarios[search as usize];
        let scenario = at_rate(base, rate, index);
        sink.add_scenario(&scenario)?;
        self.observer.on(RunEvent::TrialsAdded(u64::from(
            self.settings.trials_per_rate,
        )));
        ladders.scenarios.push(RateScenario { scenario, search });
        ladders.trials.push(0);
        ladders.tallies.push(RateTally::new(rate));
        Ok(index)
    }
}

#[cfg(test)]
mod tests;
