//! A run with `[capacity]`: the search loop fed from and into the store,
//! and what a resumed search needs back from it.

use corobench_model::{CapacitySettings, ScenarioRecord, TrialRecord};
use corobench_spec::{Plan, PlannedScenario, at_rate};
use corobench_store::Store;

use super::records::scenario_record;
use super::{Executors, RunParts, keep, runnable};
use crate::capacity::search::Finish;
use crate::capacity::{CapacityRun, CapacitySink, RateScenario};
use crate::error::EngineError;
use crate::events::RunObserver;
use crate::rounds::RunTally;

/// The store, as the search loop writes to it.
struct StoreSink<'a, 'r> {
    store: &'a mut Store,
    run: &'a RunParts<'r>,
}

impl CapacitySink for StoreSink<'_, '_> {
    fn add_scenario(&mut self, scenario: &PlannedScenario) -> Result<(), EngineError> {
        let record = scenario_record(scenario, self.run.targets, &self.run.prepared.env.bodies)?;
        self.store
            .add_scenario(self.run.run_id, &record)
            .map_err(|source| EngineError::Store {
                what: "storing the scenario of a new rate",
                source: Box::new(source),
            })
    }

    fn keep(&mut self, record: &TrialRecord) -> Result<(), EngineError> {
        keep(self.store, self.run.run_id, record)
    }
}

/// Runs every scenario's capacity search, storing scenarios and trials as
/// they come, and says how each search ended.
pub(super) fn measure(
    run: &RunParts<'_>,
    settings: &CapacitySettings,
    store: &mut Store,
    observer: &dyn RunObserver,
) -> Result<RunTally, EngineError> {
    let plan = run.plan;
    let search = CapacityRun {
        plan,
        settings,
        runnable: runnable(plan, run.prepared),
        added: run.added.to_vec(),
        stop: &run.prepared.env.stop,
        observer,
    };
    let mut sink = StoreSink { store, run };
    let executors = Executors::new(run.prepared, run.hosts);
    let ended = search.run(executors.chosen(), run.records, &mut sink)?;
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

/// A stored scenario that is no rate of any search the plan has.
#[derive(Debug, thiserror::Error)]
#[error("its scenario {key} is no rate of a search its spec plans now")]
pub struct NotARate {
    pub key: String,
}

/// The stored scenarios of a capacity run beyond the plan's own, each
/// matched to the search it belongs to.
///
/// # Errors
/// A stored scenario that is no rate of any planned search (the spec or the
/// targets changed).
pub fn added_scenarios(
    plan: &Plan,
    stored: &[ScenarioRecord],
) -> Result<Vec<RateScenario>, NotARate> {
    stored
        .iter()
        .map(|record| {
            let rate = record.schedule().rate_per_s().unwrap_or(0.0);
            plan.scenarios
                .iter()
                .map(|base| (base.index, at_rate(base, rate, record.index)))
                .find(|(_, candidate)| candidate.key == record.key)
                .map(|(search, scenario)| RateScenario { scenario, search })
                .ok_or_else(|| NotARate {
                    key: record.key.to_string(),
                })
        })
        .collect()
}
