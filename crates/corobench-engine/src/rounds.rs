//! The round loop: trial k of every scenario before trial k+1 of any, each
//! round in a seeded order; a resumed run skips what it already holds; an
//! adaptive run (`--until-ci`) keeps adding rounds for the scenarios whose
//! req/s interval is still too wide, up to the maximum.
//!
//! How one trial is carried out is a [`TrialExecutor`]'s business: the real
//! one starts a server and loads it; tests hand in a fake that returns
//! records at once, so this loop is tested without processes or timing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};

use corobench_model::{TrialRecord, TrialStatus};
use corobench_spec::{Plan, PlannedScenario};

use crate::error::EngineError;
use crate::events::{RunEvent, RunObserver};
use crate::order::{self, TrialSlot};
use corobench_analyze::median_precision;

/// The confidence of the req/s interval that `--until-ci` narrows.
pub const UNTIL_CI_CONFIDENCE: f64 = 0.95;

/// How a trial ended.
#[derive(Debug)]
pub enum TrialOutcome {
    /// Measured, or failed for a reason worth storing.
    Ended(Box<TrialRecord>),
    /// Ctrl-C arrived: nothing of this trial is kept.
    Interrupted,
}

/// Carries out one trial of a scenario.
pub trait TrialExecutor {
    /// Runs trial `slot` of `scenario`; `sequence` is its position in the run.
    fn run_trial(
        &self,
        scenario: &PlannedScenario,
        slot: TrialSlot,
        sequence: u32,
        observer: &dyn RunObserver,
    ) -> TrialOutcome;
}

/// Trials a run already has (a resumed run), so they are neither repeated
/// nor forgotten by the adaptive stop.
#[derive(Debug, Default)]
pub struct StoredTrials {
    pub slots: BTreeSet<TrialSlot>,
    /// The headline figure of the successful ones (req/s of a load, a
    /// program's first figure), by scenario index.
    pub headlines: BTreeMap<u32, Vec<f64>>,
}

impl StoredTrials {
    /// What a stored run already holds.
    #[must_use]
    pub fn from_records(trials: &[TrialRecord]) -> Self {
        let mut stored = Self::default();
        for trial in trials {
            stored.add(trial);
        }
        stored
    }

    pub(super) fn add(&mut self, trial: &TrialRecord) {
        self.slots.insert(TrialSlot {
            scenario: trial.scenario_index,
            trial: trial.trial_index,
        });
        if let Some(headline) = trial.headline() {
            self.headlines
                .entry(trial.scenario_index)
                .or_default()
                .push(headline);
        }
    }
}

/// A trial to run and its position in the run.
#[derive(Clone, Copy, Debug)]
pub(super) struct Step {
    pub slot: TrialSlot,
    pub sequence: u32,
}

/// How the trials of one invocation went.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RunTally {
    /// Trials stored, failed ones included.
    pub stored: u32,
    /// Stored trials that measured nothing.
    pub failed: u32,
    pub interrupted: bool,
}

/// What the round loop works on.
pub struct Rounds<'a> {
    pub plan: &'a Plan,
    /// Indices of the scenarios whose target was built and verified.
    pub runnable: Vec<u32>,
    /// Set by Ctrl-C: no new trial starts.
    pub stop: &'a AtomicBool,
    pub observer: &'a dyn RunObserver,
}

impl std::fmt::Debug for Rounds<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rounds")
            .field("plan", &self.plan.name)
            .field("runnable", &self.runnable)
            .finish_non_exhaustive()
    }
}

impl Rounds<'_> {
    /// Runs every trial the plan still needs, handing each record to `keep`
    /// (the store) as it ends.
    ///
    /// # Errors
    /// `keep` refused a record (disk full, ...): the loop stops at once.
    pub fn run(
        &self,
        executor: &dyn TrialExecutor,
        before: &StoredTrials,
        keep: &mut dyn FnMut(&TrialRecord) -> Result<(), EngineError>,
    ) -> Result<RunTally, EngineError> {
        let mut seen = StoredTrials {
            slots: BTreeSet::new(),
            headlines: before.headlines.clone(),
        };
        let mut tally = RunTally::default();
        let mut sequence = u32::try_from(before.slots.len()).unwrap_or(u32::MAX);
        let mut scenarios = self.runnable.clone();
        let mut round = 0;
        while !scenarios.is_empty() && round < self.plan.trials.max {
            for slot in order::round(&scenarios, round, self.plan.seed, &before.slots) {
                let trial = Step { slot, sequence };
                if !self.run_slot(executor, trial, keep, &mut tally, &mut seen)? {
                    tally.interrupted = true;
                    return Ok(tally);
                }
                sequence = sequence.saturating_add(1);
            }
            round += 1;
            scenarios = self.next_round(round, &seen.headlines);
            if round >= self.plan.trials.min && !scenarios.is_empty() {
                self.observer
                    .on(RunEvent::TrialsAdded(scenarios.len() as u64));
            }
        }
        Ok(tally)
    }

    /// Runs one trial and stores it; `Ok(false)` when Ctrl-C came first or
    /// interrupted it, so nothing was stored.
    pub(super) fn run_slot(
        &self,
        executor: &dyn TrialExecutor,
        trial: Step,
        keep: &mut dyn FnMut(&TrialRecord) -> Result<(), EngineError>,
        tally: &mut RunTally,
        seen: &mut StoredTrials,
    ) -> Result<bool, EngineError> {
        if self.stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let Step { slot, sequence } = trial;
        let scenario = &self.plan.scenarios[slot.scenario as usize];
        self.observer.on(RunEvent::TrialStarted { scenario, slot });
        let TrialOutcome::Ended(record) =
            executor.run_trial(scenario, slot, sequence, self.observer)
        else {
            return Ok(false);
        };
        keep(&record)?;
        self.observer.on(RunEvent::TrialEnded {
            scenario,
            record: &record,
        });
        tally.stored += 1;
        tally.failed += u32::from(record.status == TrialStatus::Failed);
        seen.add(&record);
        Ok(true)
    }

    /// The scenarios that get another round: all of them until the minimum
    /// is reached, then (adaptive runs) those whose headline interval is
    /// still wider than asked, or not yet bounded.
    fn next_round(&self, round: u32, headlines: &BTreeMap<u32, Vec<f64>>) -> Vec<u32> {
        if round < self.plan.trials.min {
            return self.runnable.clone();
        }
        let Some(goal) = self.plan.trials.until_ci else {
            return Vec::new();
        };
        self.runnable
            .iter()
            .copied()
            .filter(|s| {
                let values = headlines.get(s).map_or(&[][..], Vec::as_slice);
                median_precision(values, UNTIL_CI_CONFIDENCE).is_none_or(|width| width > goal)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
