//! A run with `[capacity]`: the search loop fed from and into the store,
//! and what a resumed search needs back from it.

use std::collections::BTreeMap;

use corobench_engine::capacity::search::Finish;
use corobench_engine::hosts::ReadyHosts;
use corobench_engine::targets::Targets;
use corobench_engine::{
    CapacityRun, CapacitySink, EngineError, PreparedRun, RateScenario, RunObserver, RunTally,
};
use corobench_model::{CapacitySettings, ScenarioRecord, TrialRecord};
use corobench_spec::{Plan, PlannedScenario, at_rate};
use corobench_store::Store;

use super::start::{Start, scenario_record};

/// The store, as the search loop writes to it.
struct StoreSink<'a> {
    store: &'a mut Store,
    run_id: &'a str,
    targets: &'a Targets,
    bodies: &'a BTreeMap<String, Vec<u8>>,
}

impl CapacitySink for StoreSink<'_> {
    fn add_scenario(&mut self, scenario: &PlannedScenario) -> Result<(), EngineError> {
        let record = scenario_record(scenario, self.targets, self.bodies)?;
        self.store
            .add_scenario(self.run_id, &record)
            .map_err(|source| EngineError::Store {
                what: "the scenario of a new rate",
                source: Box::new(source),
            })
    }

    fn keep(&mut self, record: &TrialRecord) -> Result<(), EngineError> {
        self.store
            .record_trial(self.run_id, record)
            .map_err(|source| EngineError::Store {
                what: "a trial",
                source: Box::new(source),
            })
    }
}

/// Runs every scenario's capacity search, storing scenarios and trials as
/// they come, and says how each search ended.
pub(super) fn measure(
    start: &Start,
    settings: &CapacitySettings,
    (store, targets): (&mut Store, &Targets),
    (prepared, hosts): (&PreparedRun, Option<&ReadyHosts>),
    observer: &dyn RunObserver,
) -> anyhow::Result<RunTally> {
    let plan = &start.plan;
    let search = CapacityRun {
        plan,
        settings,
        runnable: super::runnable(plan, prepared),
        added: start.added.clone(),
        stop: &prepared.env.stop,
        observer,
    };
    let mut sink = StoreSink {
        store,
        run_id: &start.run.id,
        targets,
        bodies: &prepared.env.bodies,
    };
    let executors = super::Executors::new(prepared, hosts);
    let ended = search.run(executors.chosen(), &start.records, &mut sink)?;
    for (index, finish) in &ended.finished {
        announce(plan, *index, *finish, observer);
    }
    Ok(ended.tally)
}

fn announce(plan: &Plan, index: u32, finish: Finish, observer: &dyn RunObserver) {
    if finish == Finish::Converged {
        return;
    }
    if let Some(scenario) = plan.scenarios.get(index as usize) {
        observer.notice(&format!(
            "capacity search of {}: {}",
            scenario.target,
            finish.describe()
        ));
    }
}

/// The stored scenarios of a capacity run beyond the plan's own, each
/// matched to the search it belongs to.
///
/// # Errors
/// A stored scenario that is no rate of any planned search (the spec or the
/// targets changed).
pub(super) fn added_scenarios(
    plan: &Plan,
    stored: &[ScenarioRecord],
) -> Result<Vec<RateScenario>, String> {
    stored
        .iter()
        .map(|record| {
            let rate = record.schedule().rate_per_s().unwrap_or(0.0);
            plan.scenarios
                .iter()
                .map(|base| (base.index, at_rate(base, rate, record.index)))
                .find(|(_, candidate)| candidate.key == record.key)
                .map(|(search, scenario)| RateScenario { scenario, search })
                .ok_or_else(|| {
                    format!(
                        "its scenario {} is no rate of a search its spec plans now",
                        record.key.as_str()
                    )
                })
        })
        .collect()
}
