//! Fakes the engine's loops are tested with: plans of as many scenarios
//! as a test asks for, an executor whose trials answer at once with the
//! figure the test chooses, and an observer that records every event.

use std::cell::RefCell;
use std::collections::BTreeMap;

use corobench_analyze::fixtures::load;
use corobench_model::TrialRecord;
use corobench_spec::{Catalog, CatalogTarget, Plan, PlannedScenario, resolve};

use crate::events::{RunEvent, RunObserver};
use crate::order::TrialSlot;
use crate::rounds::{TrialExecutor, TrialOutcome};

/// A plan of `scenarios` closed-loop scenarios (targets t0, t1, …).
pub fn plan(scenarios: usize, trials: u32, until_ci: Option<f64>, max: u32) -> Plan {
    let names: Vec<String> = (0..scenarios).map(|i| format!("t{i}")).collect();
    let catalog = Catalog {
        targets: names
            .iter()
            .map(|name| CatalogTarget {
                name: name.clone(),
                available: Ok(()),
                parameters: BTreeMap::new(),
                min_warmup: std::time::Duration::ZERO,
                program: None,
                unserved: BTreeMap::new(),
            })
            .collect(),
        cpus: 2,
    };
    let spec = format!(
        "targets = {names:?}\n[run]\ntrials = {trials}\nseed = 7\n\
         [[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n"
    );
    let mut plan = resolve(&spec, None, &catalog).expect("the test spec resolves");
    plan.trials.until_ci = until_ci;
    plan.trials.max = max;
    plan
}

/// What a fake trial of a scenario measures: req/s by trial index, or a
/// failure where the closure returns `None`.
type Measures = Box<dyn Fn(u32, u32) -> Option<f64>>;

/// Trials that answer at once; it can be told to see Ctrl-C before a trial.
pub struct FakeTrials {
    measures: Measures,
    pub interrupt_at_sequence: Option<u32>,
    ran: RefCell<Vec<(TrialSlot, u32)>>,
}

impl FakeTrials {
    pub fn new(measures: impl Fn(u32, u32) -> Option<f64> + 'static) -> Self {
        Self {
            measures: Box::new(measures),
            interrupt_at_sequence: None,
            ran: RefCell::new(Vec::new()),
        }
    }

    pub fn slots(&self) -> Vec<TrialSlot> {
        self.ran.borrow().iter().map(|(slot, _)| *slot).collect()
    }
}

impl TrialExecutor for FakeTrials {
    fn run_trial(
        &self,
        _scenario: &PlannedScenario,
        slot: TrialSlot,
        sequence: u32,
        _observer: &dyn RunObserver,
    ) -> TrialOutcome {
        if self.interrupt_at_sequence == Some(sequence) {
            return TrialOutcome::Interrupted;
        }
        self.ran.borrow_mut().push((slot, sequence));
        let measured = (self.measures)(slot.scenario, slot.trial);
        TrialOutcome::Ended(Box::new(record(
            slot,
            sequence,
            measured.map(|rate| load(rate, &[100])),
        )))
    }
}

/// A trial record as an executor returns it: failed when it measured nothing.
pub fn record(
    slot: TrialSlot,
    sequence: u32,
    load: Option<corobench_model::LoadReport>,
) -> TrialRecord {
    let trial = TrialRecord::started(slot.scenario, slot.trial, sequence, 0);
    match load {
        Some(load) => TrialRecord {
            load: Some(load),
            ..trial
        },
        None => trial.failed("it failed"),
    }
}

/// Every event, as a line of text.
#[derive(Default)]
pub struct Recorder(pub RefCell<Vec<String>>);

impl RunObserver for Recorder {
    fn on(&self, event: RunEvent<'_>) {
        let line = match event {
            RunEvent::TrialStarted { slot, .. } => {
                format!("start {}/{}", slot.scenario, slot.trial)
            }
            RunEvent::TrialEnded { record, .. } => format!("end {:?}", record.status),
            RunEvent::TrialsAdded(n) => format!("added {n}"),
            other => format!("{other:?}"),
        };
        self.0.borrow_mut().push(line);
    }
}

pub fn trials_of(stored: &[TrialRecord], scenario: u32) -> usize {
    stored
        .iter()
        .filter(|t| t.scenario_index == scenario)
        .count()
}
