//! A run's trials, from its plan to the store: the round loop (or the
//! budgeted loop, or a capacity search) hands each trial to the executor of
//! the run's place (this machine, or its hosts), and each record to the
//! store as it ends; a run that asks for profiles takes them afterwards.
//! The run's start and end (its record, its status, the table) are the
//! command's.

mod capacity;
mod profiles;
mod records;

use corobench_model::TrialRecord;
use corobench_spec::Plan;
use corobench_store::Store;

pub use self::capacity::added_scenarios;
pub use self::records::{scenario_record, scenario_records, with_tools};
use crate::budget::{Budgeted, SinceStart, Unmet};
use crate::capacity::RateScenario;
use crate::error::EngineError;
use crate::events::RunObserver;
use crate::hosts::{OnHosts, ReadyHosts};
use crate::local::ThisMachine;
use crate::prepare::PreparedRun;
use crate::rounds::{Rounds, RunTally, StoredTrials, TrialExecutor};
use crate::targets::Targets;
use crate::trial::Trials;

/// A run about to measure: its plan and what it holds already, prepared.
#[derive(Debug)]
pub struct RunParts<'a> {
    pub plan: &'a Plan,
    pub run_id: &'a str,
    /// Trials a resumed run already holds.
    pub before: &'a StoredTrials,
    /// The same trials in full: a capacity search judges them again.
    pub records: &'a [TrialRecord],
    /// Scenarios a resumed capacity run added for the rates it tried.
    pub added: &'a [RateScenario],
    pub targets: &'a Targets,
    pub prepared: &'a PreparedRun,
    /// The run's hosts; `None`: this machine.
    pub hosts: Option<&'a ReadyHosts>,
}

/// Runs the trials the plan still needs, each stored as it ends: a
/// capacity search, or the plan's rounds and then its profiles.
///
/// # Errors
/// The store refused a record: the loop stops at once (completed trials
/// are kept).
pub fn measure(
    run: &RunParts<'_>,
    store: &mut Store,
    observer: &dyn RunObserver,
) -> Result<RunTally, EngineError> {
    if let Some(settings) = &run.plan.capacity {
        return capacity::measure(run, settings, store, observer);
    }
    let tally = rounds(run, store, observer)?;
    if run.plan.profile && !tally.interrupted {
        profiles::take(run, store, observer)?;
    }
    Ok(tally)
}

/// The plan's scenarios whose target was built and verified (on the
/// server host, for `[hosts]`: there each trial's `serve` does both).
#[must_use]
pub fn runnable(plan: &Plan, prepared: &PreparedRun) -> Vec<u32> {
    plan.scenarios
        .iter()
        .filter(|s| plan.hosts.is_some() || prepared.env.built.contains_key(&s.target))
        .map(|s| s.index)
        .collect()
}

/// The executor of a run's trials: on this machine, or on its hosts.
struct Executors<'a> {
    here: Trials<ThisMachine<'a>>,
    hosts: Option<Trials<OnHosts<'a>>>,
}

impl<'a> Executors<'a> {
    fn new(prepared: &'a PreparedRun, hosts: Option<&'a ReadyHosts>) -> Self {
        let env = &prepared.env;
        Self {
            here: Trials {
                place: ThisMachine { env },
            },
            hosts: hosts.map(|hosts| Trials {
                place: OnHosts { env, hosts },
            }),
        }
    }

    /// The hosts' executor when the run has `[hosts]`, else this machine's.
    fn chosen(&self) -> &dyn TrialExecutor {
        match &self.hosts {
            Some(hosts) => hosts,
            None => &self.here,
        }
    }
}

/// A trial as the store keeps it.
fn keep(store: &mut Store, run_id: &str, record: &TrialRecord) -> Result<(), EngineError> {
    store
        .record_trial(run_id, record)
        .map_err(|source| EngineError::Store {
            what: "storing a trial",
            source: Box::new(source),
        })
}

/// The plan's rounds (or, with a budget, the budgeted loop).
fn rounds(
    run: &RunParts<'_>,
    store: &mut Store,
    observer: &dyn RunObserver,
) -> Result<RunTally, EngineError> {
    let plan = run.plan;
    let rounds = Rounds {
        plan,
        runnable: runnable(plan, run.prepared),
        stop: &run.prepared.env.stop,
        observer,
    };
    let executors = Executors::new(run.prepared, run.hosts);
    let trials = executors.chosen();
    let mut keep = |record: &TrialRecord| keep(store, run.run_id, record);
    let (Some(budget), Some(goal)) = (plan.trials.budget, plan.trials.until_ci) else {
        return rounds.run(trials, run.before, &mut keep);
    };
    let clock = SinceStart::now();
    let budgeted = Budgeted {
        rounds,
        budget,
        goal,
        clock: &clock,
    };
    let ended = budgeted.run(trials, run.before, &mut keep)?;
    announce_unmet(plan, goal, &ended.unmet, observer);
    Ok(ended.tally)
}

/// Which scenarios a budgeted run left short of its goal, and why.
fn announce_unmet(plan: &Plan, goal: f64, unmet: &[Unmet], observer: &dyn RunObserver) {
    if unmet.is_empty() {
        observer.notice(&format!(
            "every scenario's req/s interval is within ±{}%",
            goal * 100.0
        ));
        return;
    }
    observer.notice(&format!(
        "{} of {} scenarios did not reach ±{}% in req/s:",
        unmet.len(),
        plan.scenarios.len(),
        goal * 100.0
    ));
    for scenario in unmet {
        let key = plan
            .scenarios
            .get(scenario.scenario as usize)
            .map_or("?", |s| s.key.as_str());
        observer.notice(&format!("  {}", scenario.describe(key)));
    }
}
