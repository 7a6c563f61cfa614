//! The round loop with a fake executor: no processes, no timing. Each fake
//! trial answers at once with a req/s the test chooses.

use std::sync::atomic::{AtomicBool, Ordering};

use corobench_model::{TrialRecord, TrialStatus};
use corobench_spec::Plan;

use super::{Rounds, RunTally, StoredTrials};
use crate::error::EngineError;
use crate::fakes::{FakeTrials, Recorder, plan, trials_of};
use crate::order::{self, TrialSlot};

fn rounds<'a>(
    plan: &'a Plan,
    runnable: Vec<u32>,
    stop: &'a AtomicBool,
    observer: &'a Recorder,
) -> Rounds<'a> {
    Rounds {
        plan,
        runnable,
        stop,
        observer,
    }
}

/// Runs the loop over every scenario of `plan`; the stored records come back.
fn run(
    plan: &Plan,
    trials: &FakeTrials,
    before: &StoredTrials,
    observer: &Recorder,
) -> (Result<RunTally, EngineError>, Vec<TrialRecord>) {
    let stop = AtomicBool::new(false);
    let every = plan.scenarios.iter().map(|s| s.index).collect();
    let mut stored = Vec::new();
    let tally = rounds(plan, every, &stop, observer).run(trials, before, &mut |record| {
        stored.push(record.clone());
        Ok(())
    });
    (tally, stored)
}

/// A fresh run (nothing stored before) that nobody watches.
fn run_fresh(
    plan: &Plan,
    trials: &FakeTrials,
) -> (Result<RunTally, EngineError>, Vec<TrialRecord>) {
    run(plan, trials, &StoredTrials::default(), &Recorder::default())
}

fn expected(stored: u32, failed: u32, interrupted: bool) -> RunTally {
    RunTally {
        stored,
        failed,
        interrupted,
    }
}

#[test]
fn every_scenario_gets_its_trials_round_by_round_in_the_seeded_order() {
    let plan = plan(4, 3, None, 20);
    let trials = FakeTrials::new(|_, _| Some(1000.0));
    let (tally, stored) = run_fresh(&plan, &trials);
    assert_eq!(tally.unwrap(), expected(12, 0, false));
    let all: Vec<u32> = (0..4).collect();
    let expected: Vec<TrialSlot> = (0..3)
        .flat_map(|round| order::round(&all, round, plan.seed, &Default::default()))
        .collect();
    assert_eq!(trials.slots(), expected);
    let sequences: Vec<u32> = stored.iter().map(|t| t.sequence).collect();
    assert_eq!(sequences, (0..12).collect::<Vec<_>>());
}

#[test]
fn a_resumed_run_keeps_the_original_order_of_what_it_still_needs() {
    let plan = plan(5, 2, None, 20);
    let fresh = FakeTrials::new(|_, _| Some(1000.0));
    let (_, everything) = run(
        &plan,
        &fresh,
        &StoredTrials::default(),
        &Recorder::default(),
    );
    let before = StoredTrials::from_records(&everything[..4]);
    let resumed = FakeTrials::new(|_, _| Some(1000.0));
    let (tally, stored) = run(&plan, &resumed, &before, &Recorder::default());
    assert_eq!(tally.unwrap().stored, 6);
    assert_eq!(resumed.slots(), fresh.slots()[4..].to_vec());
    assert_eq!(
        stored[0].sequence, 4,
        "numbering goes on from the stored trials"
    );
}

#[test]
fn until_ci_stops_a_scenario_once_its_interval_is_narrow_enough() {
    // 6 equal values bound a 95% interval of width 0: six trials suffice.
    let plan = plan(2, 3, Some(0.05), 30);
    let trials = FakeTrials::new(|_, _| Some(1000.0));
    let observer = Recorder::default();
    let (tally, stored) = run(&plan, &trials, &StoredTrials::default(), &observer);
    assert_eq!(tally.unwrap().stored, 12);
    assert_eq!((trials_of(&stored, 0), trials_of(&stored, 1)), (6, 6));
    let added = observer
        .0
        .borrow()
        .iter()
        .filter(|l| l.starts_with("added"))
        .count();
    assert_eq!(
        added,
        3,
        "rounds 4, 5 and 6 were added: {:?}",
        observer.0.borrow()
    );
}

#[test]
fn until_ci_runs_a_scenario_that_never_narrows_up_to_the_maximum() {
    let plan = plan(2, 3, Some(0.05), 9);
    // Scenario 0 agrees with itself; scenario 1 alternates by a factor of 2.
    let trials = FakeTrials::new(|scenario, trial| {
        Some(if scenario == 1 && trial % 2 == 1 {
            2000.0
        } else {
            1000.0
        })
    });
    let (tally, stored) = run_fresh(&plan, &trials);
    assert_eq!(tally.unwrap().stored, 6 + 9);
    assert_eq!((trials_of(&stored, 0), trials_of(&stored, 1)), (6, 9));
}

#[test]
fn a_scenario_whose_trials_all_fail_is_tried_to_the_maximum_and_counted() {
    let plan = plan(1, 2, Some(0.05), 4);
    let trials = FakeTrials::new(|_, _| None);
    let (tally, stored) = run_fresh(&plan, &trials);
    assert_eq!(tally.unwrap(), expected(4, 4, false));
    assert!(stored.iter().all(|t| t.status == TrialStatus::Failed));
}

#[test]
fn without_until_ci_the_minimum_is_all_there_is() {
    let plan = plan(1, 2, None, 40);
    let trials = FakeTrials::new(|_, trial| Some(1000.0 * f64::from(trial + 1)));
    let (tally, _) = run_fresh(&plan, &trials);
    assert_eq!(tally.unwrap().stored, 2);
}

#[test]
fn an_interrupted_trial_ends_the_loop_and_keeps_what_was_stored() {
    let plan = plan(3, 2, None, 20);
    let mut trials = FakeTrials::new(|_, _| Some(1000.0));
    trials.interrupt_at_sequence = Some(4);
    let (tally, stored) = run_fresh(&plan, &trials);
    assert_eq!(tally.unwrap(), expected(4, 0, true));
    assert_eq!(stored.len(), 4);
}

#[test]
fn ctrl_c_before_a_trial_starts_none() {
    let plan = plan(2, 2, None, 20);
    let trials = FakeTrials::new(|_, _| Some(1000.0));
    let stop = AtomicBool::new(true);
    let observer = Recorder::default();
    let rounds = rounds(&plan, vec![0, 1], &stop, &observer);
    let tally = rounds.run(&trials, &StoredTrials::default(), &mut |_| Ok(()));
    assert!(tally.unwrap().interrupted);
    assert!(trials.slots().is_empty());
    assert!(stop.load(Ordering::Relaxed));
}

#[test]
fn a_store_that_refuses_a_trial_stops_the_loop_with_its_error() {
    let plan = plan(2, 2, None, 20);
    let trials = FakeTrials::new(|_, _| Some(1000.0));
    let stop = AtomicBool::new(false);
    let observer = Recorder::default();
    let rounds = rounds(&plan, vec![0, 1], &stop, &observer);
    let error = rounds
        .run(&trials, &StoredTrials::default(), &mut |_| {
            Err(EngineError::Store {
                what: "storing a trial",
                source: Box::new(corobench_store::StoreError::DiskFull {
                    path: "runs.db".into(),
                    run_id: None,
                }),
            })
        })
        .unwrap_err();
    assert!(error.to_string().contains("full"), "{error}");
    assert_eq!(
        trials.slots().len(),
        1,
        "no trial runs after the store failed"
    );
    let lines = observer.0.borrow();
    assert_eq!(
        lines.len(),
        1,
        "the refused trial is not reported as ended: {lines:?}"
    );
    assert!(lines[0].starts_with("start "), "{lines:?}");
}

#[test]
fn only_runnable_scenarios_are_measured() {
    let plan = plan(3, 2, None, 20);
    let trials = FakeTrials::new(|_, _| Some(1000.0));
    let stop = AtomicBool::new(false);
    let observer = Recorder::default();
    let rounds = rounds(&plan, vec![0, 2], &stop, &observer);
    let tally = rounds.run(&trials, &StoredTrials::default(), &mut |_| Ok(()));
    assert_eq!(tally.unwrap().stored, 4);
    assert!(trials.slots().iter().all(|s| s.scenario != 1));
}
