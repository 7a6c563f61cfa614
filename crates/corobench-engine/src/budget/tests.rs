//! The budgeted loop with a fake executor and a fake clock: each trial
//! "takes" a fixed time the test chooses; nothing real is timed.

use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use corobench_model::TrialRecord;
use corobench_spec::{Plan, PlannedScenario};

use super::{BudgetTally, Budgeted, Clock, Shortfall};
use crate::events::RunObserver;
use crate::fakes::{FakeTrials, Recorder, plan, trials_of};
use crate::order::TrialSlot;
use crate::rounds::{Rounds, StoredTrials, TrialExecutor, TrialOutcome};

/// Time that moves only when a fake trial runs.
#[derive(Default)]
struct FakeClock(Cell<Duration>);

impl Clock for FakeClock {
    fn elapsed(&self) -> Duration {
        self.0.get()
    }
}

/// A fake trial that advances the fake clock by `per_trial`.
struct Timed<'a> {
    trials: &'a FakeTrials,
    clock: &'a FakeClock,
    per_trial: Duration,
}

impl TrialExecutor for Timed<'_> {
    fn run_trial(
        &self,
        scenario: &PlannedScenario,
        slot: TrialSlot,
        sequence: u32,
        observer: &dyn RunObserver,
    ) -> TrialOutcome {
        self.clock.0.set(self.clock.0.get() + self.per_trial);
        self.trials.run_trial(scenario, slot, sequence, observer)
    }
}

/// Req/s that never agree closely: ±`spread` around 1000, alternating.
fn noisy(spread: f64) -> impl Fn(u32) -> f64 {
    move |trial| 1000.0 * (1.0 + spread * f64::from(trial % 3) - spread)
}

/// Runs the budgeted loop over every scenario of `plan`.
fn run_budgeted(
    plan: &Plan,
    trials: &FakeTrials,
    per_trial: Duration,
    budget: Duration,
) -> (BudgetTally, Vec<TrialRecord>, Duration) {
    let (stop, observer, clock) = (
        AtomicBool::new(false),
        Recorder::default(),
        FakeClock::default(),
    );
    let budgeted = Budgeted {
        rounds: Rounds {
            plan,
            runnable: plan.scenarios.iter().map(|s| s.index).collect(),
            stop: &stop,
            observer: &observer,
        },
        budget,
        goal: 0.05,
        clock: &clock,
    };
    let executor = Timed {
        trials,
        clock: &clock,
        per_trial,
    };
    let mut stored = Vec::new();
    let tally = budgeted
        .run(&executor, &StoredTrials::default(), &mut |record| {
            stored.push(record.clone());
            Ok(())
        })
        .expect("the fake store keeps everything");
    (tally, stored, clock.elapsed())
}

#[test]
fn a_scenario_that_meets_the_goal_stops_and_one_that_cannot_runs_to_the_maximum() {
    let plan = plan(2, 6, Some(0.05), 10);
    let wide = noisy(0.3);
    let trials = FakeTrials::new(move |s, t| Some(if s == 0 { 1000.0 } else { wide(t) }));
    let hour = Duration::from_secs(3600);
    let (tally, stored, _) = run_budgeted(&plan, &trials, Duration::from_secs(1), hour);
    assert_eq!(
        trials_of(&stored, 0),
        6,
        "within ±5% after the first rounds"
    );
    assert_eq!(trials_of(&stored, 1), 10);
    assert_eq!(tally.unmet.len(), 1, "{:?}", tally.unmet);
    assert_eq!(tally.unmet[0].scenario, 1);
    assert_eq!(tally.unmet[0].why, Shortfall::MaxTrials);
    assert_eq!(tally.tally.stored, 16);
}

#[test]
fn the_first_rounds_run_even_past_the_budget_and_say_so() {
    let plan = plan(2, 6, Some(0.05), 20);
    let wide = noisy(0.3);
    let trials = FakeTrials::new(move |_, t| Some(wide(t)));
    let budget = Duration::from_secs(50);
    let (tally, stored, elapsed) = run_budgeted(&plan, &trials, Duration::from_secs(10), budget);
    assert_eq!(stored.len(), 12, "every scenario gets its first 6 trials");
    assert_eq!(elapsed, Duration::from_secs(120));
    assert!(tally.unmet.iter().all(|u| u.why == Shortfall::BudgetSpent));
}

#[test]
fn no_trial_starts_that_the_mean_trial_time_would_push_past_the_budget() {
    let plan = plan(2, 6, Some(0.05), 20);
    let wide = noisy(0.3);
    let trials = FakeTrials::new(move |_, t| Some(wide(t)));
    let per_trial = Duration::from_secs(10);
    let budget = Duration::from_secs(155);
    let (tally, stored, elapsed) = run_budgeted(&plan, &trials, per_trial, budget);
    // 12 trials of the first rounds (120 s), then 3 more: the 16th would
    // end at 160 s.
    assert_eq!(stored.len(), 15, "the 16th would end at 160 s");
    assert!(elapsed <= budget, "{elapsed:?}");
    assert_eq!(tally.unmet.len(), 2);
    assert!(tally.unmet.iter().all(|u| u.why == Shortfall::BudgetSpent));
    assert!(
        tally.unmet[0].describe("k").contains("budget spent"),
        "{}",
        tally.unmet[0].describe("k")
    );
}

#[test]
fn the_first_rounds_come_first_then_the_widest_interval_gets_the_next_trial() {
    let plan = plan(3, 6, Some(0.05), 20);
    let (narrowish, wide) = (noisy(0.08), noisy(0.4));
    let trials = FakeTrials::new(move |s, t| {
        Some(match s {
            0 => 1000.0,
            1 => narrowish(t),
            _ => wide(t),
        })
    });
    let budget = Duration::from_secs(19);
    let (_, _, _) = run_budgeted(&plan, &trials, Duration::from_secs(1), budget);
    let slots = trials.slots();
    assert_eq!(slots.len(), 19);
    for (k, slot) in slots.iter().take(18).enumerate() {
        assert_eq!(
            slot.trial as usize,
            k / 3,
            "round by round first: {slots:?}"
        );
    }
    assert_eq!(
        slots[18],
        TrialSlot {
            scenario: 2,
            trial: 6
        }
    );
}

#[test]
fn a_run_that_meets_every_goal_leaves_budget_unused() {
    let plan = plan(2, 6, Some(0.05), 20);
    let trials = FakeTrials::new(|_, _| Some(500.0));
    let hour = Duration::from_secs(3600);
    let (tally, stored, elapsed) = run_budgeted(&plan, &trials, Duration::from_secs(1), hour);
    assert_eq!(stored.len(), 12);
    assert!(tally.unmet.is_empty());
    assert_eq!(elapsed, Duration::from_secs(12));
}
