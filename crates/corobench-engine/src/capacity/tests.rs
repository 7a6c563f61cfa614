//! The capacity loop with a fake service whose latency jumps past its
//! capacity: no processes, no timing.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use corobench_model::{CapacitySettings, OpenLoopReport, ScheduleKind, TrialRecord};
use corobench_spec::{Catalog, CatalogTarget, Plan, PlannedScenario, resolve};

use super::search::Finish;
use super::{CapacityRun, CapacitySink, CapacityTally, RateScenario};
use crate::error::EngineError;
use crate::events::Silent;
use crate::fakes::record;
use crate::order::TrialSlot;
use crate::rounds::{TrialExecutor, TrialOutcome};
use corobench_analyze::fixtures::load;

/// Two targets searched with `p99 <= 10ms` from 1000 req/s.
fn plan() -> Plan {
    let targets = ["fast", "slow"].map(|name| CatalogTarget {
        name: name.to_owned(),
        available: Ok(()),
        parameters: BTreeMap::new(),
        min_warmup: std::time::Duration::ZERO,
        program: None,
        unserved: BTreeMap::new(),
    });
    let catalog = Catalog {
        targets: targets.to_vec(),
        cpus: 2,
    };
    let spec = "targets = [\"fast\", \"slow\"]\n[run]\nseed = 3\n\
                [[workloads]]\nname = \"json\"\npath = \"/json\"\n\
                [capacity]\nslo = [\"p99 <= 10ms\", \"errors <= 1%\"]\nstart_rate = 1000\n";
    resolve(spec, None, &catalog).expect("the test spec resolves")
}

/// A service per target: under its capacity it answers in 1 ms, above it
/// the queue grows to 50 ms. The executor records what it was asked.
struct Service {
    capacity: BTreeMap<String, f64>,
    asked: RefCell<Vec<(String, f64, TrialSlot)>>,
    interrupt_after: Option<usize>,
}

impl TrialExecutor for Service {
    fn run_trial(
        &self,
        scenario: &PlannedScenario,
        slot: TrialSlot,
        sequence: u32,
        _observer: &dyn crate::events::RunObserver,
    ) -> TrialOutcome {
        if self.interrupt_after == Some(self.asked.borrow().len()) {
            return TrialOutcome::Interrupted;
        }
        let ScheduleKind::Open { rate_per_s } = scenario.schedule.kind else {
            panic!("a capacity trial is an open loop: {:?}", scenario.schedule);
        };
        let (target, rate) = (scenario.target.clone(), rate_per_s);
        self.asked.borrow_mut().push((target.clone(), rate, slot));
        let latency = if rate <= self.capacity[&target] {
            1_000
        } else {
            50_000
        };
        let mut report = load(rate, &[latency; 100]);
        report.open_loop = Some(OpenLoopReport {
            requested_rate_per_s: rate,
            achieved_rate_per_s: rate,
            scheduled: 100,
            sent: 100,
            mean_send_lag_us: 0.0,
            max_send_lag_us: 0,
            tick_us: None,
        });
        TrialOutcome::Ended(Box::new(record(slot, sequence, Some(report))))
    }
}

/// A store in memory.
#[derive(Default)]
struct Kept {
    scenarios: Vec<PlannedScenario>,
    trials: Vec<TrialRecord>,
}

impl CapacitySink for Kept {
    fn add_scenario(&mut self, scenario: &PlannedScenario) -> Result<(), EngineError> {
        self.scenarios.push(scenario.clone());
        Ok(())
    }

    fn keep(&mut self, record: &TrialRecord) -> Result<(), EngineError> {
        self.trials.push(record.clone());
        Ok(())
    }
}

fn service(interrupt_after: Option<usize>) -> Service {
    Service {
        capacity: [("fast".to_owned(), 9_000.0), ("slow".to_owned(), 2_500.0)].into(),
        asked: RefCell::new(Vec::new()),
        interrupt_after,
    }
}

fn run(
    plan: &Plan,
    service: &Service,
    added: Vec<RateScenario>,
    before: &[TrialRecord],
    kept: &mut Kept,
) -> CapacityTally {
    let stop = AtomicBool::new(false);
    let settings: &CapacitySettings = plan.capacity.as_ref().unwrap();
    let search = CapacityRun {
        plan,
        settings,
        runnable: vec![0, 1],
        added,
        stop: &stop,
        observer: &Silent,
    };
    let tally = search.run(service, before, kept).unwrap();
    assert!(!stop.load(Ordering::Relaxed));
    tally
}

#[test]
fn each_target_is_searched_to_its_own_capacity_with_turns_taken() {
    let plan = plan();
    let service = service(None);
    let mut kept = Kept::default();
    let tally = run(&plan, &service, Vec::new(), &[], &mut kept);
    assert_eq!(
        tally.finished,
        [(0, Finish::Converged), (1, Finish::Converged)]
    );
    assert_eq!(tally.tally.stored as usize, kept.trials.len());
    let asked = service.asked.borrow();
    for (target, capacity) in [("fast", 9_000.0), ("slow", 2_500.0)] {
        let rates: Vec<f64> = asked
            .iter()
            .filter(|a| a.0 == target)
            .map(|a| a.1)
            .collect();
        let pass = rates
            .iter()
            .copied()
            .filter(|r| *r <= capacity)
            .fold(0.0, f64::max);
        let fail = rates
            .iter()
            .copied()
            .filter(|r| *r > capacity)
            .fold(f64::INFINITY, f64::min);
        assert!(
            fail / pass < 1.07,
            "{target}: {pass}..{fail} from {rates:?}"
        );
    }
    // Turns: neither search runs two trials while the other waits, as long
    // as both are searching.
    let first: Vec<&str> = asked.iter().take(6).map(|a| a.0.as_str()).collect();
    assert_eq!(
        first.iter().filter(|t| **t == "fast").count(),
        3,
        "{first:?}"
    );
    // Every rate beyond the first is a scenario of its own, keyed by its rate.
    assert!(
        kept.scenarios
            .iter()
            .all(|s| s.key.as_str().contains("/rate="))
    );
    let indices: Vec<u32> = kept.scenarios.iter().map(|s| s.index).collect();
    assert_eq!(indices, (2..2 + indices.len() as u32).collect::<Vec<_>>());
}

#[test]
fn a_resumed_search_goes_on_where_it_stopped() {
    let plan = plan();
    let whole = {
        let mut kept = Kept::default();
        run(&plan, &service(None), Vec::new(), &[], &mut kept);
        kept
    };
    let mut first = Kept::default();
    let interrupted = {
        let stop = AtomicBool::new(false);
        let search = CapacityRun {
            plan: &plan,
            settings: plan.capacity.as_ref().unwrap(),
            runnable: vec![0, 1],
            added: Vec::new(),
            stop: &stop,
            observer: &Silent,
        };
        search.run(&service(Some(10)), &[], &mut first).unwrap()
    };
    assert!(interrupted.tally.interrupted);
    assert_eq!(first.trials.len(), 10);
    let added: Vec<RateScenario> = first
        .scenarios
        .iter()
        .map(|s| RateScenario {
            scenario: s.clone(),
            search: u32::from(s.target == "slow"),
        })
        .collect();
    let mut rest = Kept::default();
    run(&plan, &service(None), added, &first.trials, &mut rest);
    let rates = |trials: &[TrialRecord]| -> Vec<(u32, f64)> {
        let mut rates: Vec<(u32, f64)> = trials
            .iter()
            .map(|t| {
                let load = t.load.as_ref().unwrap();
                (t.trial_index, load.requests_per_s)
            })
            .collect();
        rates.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        rates
    };
    let mut resumed = first.trials.clone();
    resumed.extend(rest.trials.iter().cloned());
    assert_eq!(rates(&resumed), rates(&whole.trials));
}
