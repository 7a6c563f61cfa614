//! A run with a time budget (`[run] budget`, `--budget`): every scenario
//! first gets the plan's minimum of trials, round by round as in
//! [`Rounds`]; then each further trial goes to the scenario whose req/s
//! interval is widest relative to the goal (`until_ci`), until every
//! scenario meets the goal, reaches the maximum of trials, or the time is
//! spent. A further trial is never started when the time measured so far
//! plus the mean length of a trial would pass the budget, so a run ends
//! about when it was asked to rather than a whole trial later. The first
//! rounds always run, budget or not: a run whose first rounds alone take
//! longer than its budget runs over it rather than leave every interval
//! unbounded.
//!
//! Time comes from a [`Clock`], so the loop is tested with a fake one.

use std::time::{Duration, Instant};

use corobench_model::TrialRecord;

use crate::error::EngineError;
use crate::events::RunEvent;
use crate::order::{self, TrialSlot};
use crate::rounds::{Rounds, RunTally, Step, StoredTrials, TrialExecutor, UNTIL_CI_CONFIDENCE};
use corobench_analyze::median_precision;

/// Time since the budget started.
pub trait Clock {
    fn elapsed(&self) -> Duration;
}

/// The real clock: monotonic time since it was made.
#[derive(Debug)]
pub struct SinceStart(Instant);

impl SinceStart {
    #[must_use]
    pub fn now() -> Self {
        Self(Instant::now())
    }
}

impl Clock for SinceStart {
    fn elapsed(&self) -> Duration {
        self.0.elapsed()
    }
}

/// Why a scenario's req/s interval did not reach the goal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shortfall {
    /// The next trial would have passed the budget.
    BudgetSpent,
    /// The scenario had all the trials it may have.
    MaxTrials,
    /// Ctrl-C ended the run first.
    Interrupted,
}

/// A scenario that ended short of the goal.
#[derive(Clone, Debug, PartialEq)]
pub struct Unmet {
    pub scenario: u32,
    /// Its req/s interval's relative half-width; `None`: not yet bounded.
    pub precision: Option<f64>,
    /// Trials it has, failed ones included.
    pub trials: u32,
    pub why: Shortfall,
}

/// How a budgeted run went.
#[derive(Debug, Default, PartialEq)]
pub struct BudgetTally {
    pub tally: RunTally,
    /// In plan order.
    pub unmet: Vec<Unmet>,
}

/// The budgeted loop: [`Rounds`]' scenarios, stop flag and observer, a
/// budget and a goal.
pub struct Budgeted<'a> {
    pub rounds: Rounds<'a>,
    pub budget: Duration,
    /// The req/s interval's relative half-width to reach.
    pub goal: f64,
    pub clock: &'a dyn Clock,
}

impl std::fmt::Debug for Budgeted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budgeted")
            .field("rounds", &self.rounds)
            .field("budget", &self.budget)
            .field("goal", &self.goal)
            .finish_non_exhaustive()
    }
}

/// The trials this invocation ran and the time they took.
#[derive(Debug, Default)]
struct Spent {
    trials: u32,
    time: Duration,
}

impl Spent {
    fn mean(&self) -> Duration {
        self.time.checked_div(self.trials).unwrap_or_default()
    }
}

impl Budgeted<'_> {
    /// Runs trials until every scenario meets the goal or the budget is
    /// spent, handing each record to `keep` (the store) as it ends.
    ///
    /// # Errors
    /// `keep` refused a record (disk full, ...): the loop stops at once.
    pub fn run(
        &self,
        executor: &dyn TrialExecutor,
        before: &StoredTrials,
        keep: &mut dyn FnMut(&TrialRecord) -> Result<(), EngineError>,
    ) -> Result<BudgetTally, EngineError> {
        let mut seen = StoredTrials {
            slots: before.slots.clone(),
            headlines: before.headlines.clone(),
        };
        let mut tally = RunTally::default();
        let mut sequence = u32::try_from(before.slots.len()).unwrap_or(u32::MAX);
        let mut spent = Spent::default();
        let mut budget_spent = false;
        while let Some(slot) = self.next_slot(&seen) {
            // The first rounds always run: without them no interval is
            // bounded and the run would report nothing it can stand by.
            let extra = slot.trial >= self.rounds.plan.trials.min;
            if extra && self.clock.elapsed().saturating_add(spent.mean()) > self.budget {
                budget_spent = true;
                break;
            }
            if slot.trial >= self.rounds.plan.trials.min {
                self.rounds.observer.on(RunEvent::TrialsAdded(1));
            }
            let started = self.clock.elapsed();
            let step = Step { slot, sequence };
            if !self
                .rounds
                .run_slot(executor, step, keep, &mut tally, &mut seen)?
            {
                tally.interrupted = true;
                break;
            }
            spent.trials += 1;
            spent.time += self.clock.elapsed().saturating_sub(started);
            sequence = sequence.saturating_add(1);
        }
        let why = if tally.interrupted {
            Shortfall::Interrupted
        } else if budget_spent {
            Shortfall::BudgetSpent
        } else {
            Shortfall::MaxTrials
        };
        Ok(BudgetTally {
            unmet: self.unmet(&seen, why),
            tally,
        })
    }

    /// The next trial: the first rounds in their seeded order, then the
    /// scenario furthest from the goal (unbounded intervals first, then
    /// the widest, then the one with the fewest trials). `None`: every
    /// scenario meets the goal or has the maximum of trials.
    fn next_slot(&self, seen: &StoredTrials) -> Option<TrialSlot> {
        let (plan, runnable) = (self.rounds.plan, &self.rounds.runnable);
        let first_rounds = (0..plan.trials.min).find_map(|round| {
            order::round(runnable, round, plan.seed, &seen.slots)
                .first()
                .copied()
        });
        if first_rounds.is_some() {
            return first_rounds;
        }
        let furthest = runnable
            .iter()
            .copied()
            .filter(|&s| trials_of(seen, s) < plan.trials.max)
            .filter_map(|s| {
                let width = self.precision(seen, s).unwrap_or(f64::INFINITY);
                (width > self.goal).then_some((s, width))
            })
            .max_by(|(a, wa), (b, wb)| {
                wa.total_cmp(wb)
                    .then_with(|| trials_of(seen, *b).cmp(&trials_of(seen, *a)))
                    .then_with(|| b.cmp(a))
            })?;
        let scenario = furthest.0;
        let trial = (0..).find(|&trial| !seen.slots.contains(&TrialSlot { scenario, trial }))?;
        Some(TrialSlot { scenario, trial })
    }

    fn precision(&self, seen: &StoredTrials, scenario: u32) -> Option<f64> {
        let values = seen.headlines.get(&scenario).map_or(&[][..], Vec::as_slice);
        median_precision(values, UNTIL_CI_CONFIDENCE)
    }

    /// The scenarios short of the goal when the loop ended. One that also
    /// has all its trials is short for that reason, whatever ended the run.
    fn unmet(&self, seen: &StoredTrials, why: Shortfall) -> Vec<Unmet> {
        self.rounds
            .runnable
            .iter()
            .copied()
            .filter_map(|scenario| {
                let precision = self.precision(seen, scenario);
                if precision.is_some_and(|width| width <= self.goal) {
                    return None;
                }
                let trials = trials_of(seen, scenario);
                let why = if trials >= self.rounds.plan.trials.max {
                    Shortfall::MaxTrials
                } else {
                    why
                };
                Some(Unmet {
                    scenario,
                    precision,
                    trials,
                    why,
                })
            })
            .collect()
    }
}

fn trials_of(seen: &StoredTrials, scenario: u32) -> u32 {
    let count = seen.slots.iter().filter(|s| s.scenario == scenario).count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

impl Unmet {
    /// `go-ants/…/plaintext/c=64: ±7.2% after 9 trials (budget spent)`.
    #[must_use]
    pub fn describe(&self, key: &str) -> String {
        let precision = self.precision.map_or_else(
            || "no bounded interval".to_owned(),
            |width| format!("±{:.1}%", width * 100.0),
        );
        let why = match self.why {
            Shortfall::BudgetSpent => "budget spent",
            Shortfall::MaxTrials => "maximum of trials reached",
            Shortfall::Interrupted => "interrupted",
        };
        format!("{key}: {precision} after {} trials ({why})", self.trials)
    }
}

#[cfg(test)]
mod tests;
