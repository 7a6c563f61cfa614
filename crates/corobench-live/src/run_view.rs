//! The live view of `corobench run` and `bench`: the plan's progress with an
//! ETA, the current trial live, each scenario's trials so far as a strip,
//! the machine probe, and warnings as they arise. Its state changes only
//! through [`RunView::apply`], with the run's own events and the time each
//! arrived, so a fixed sequence of events always draws the same screen.
//! Drawing is in [`crate::run_panes`].

use std::time::Duration;

use corobench_engine::{Phase, RunEvent, StoredTrials};
use corobench_model::{MachineProbe, TrialRecord, TrialStatus};
use corobench_spec::PlannedScenario;

use crate::rates::SecondRates;
use crate::trial_line::{trial_line, trial_summary};

/// What a trial's time is assumed to hold besides its warm-up and window
/// (starting, probing, the leak check and stopping) before one ended.
const TRIAL_OVERHEAD_GUESS: Duration = Duration::from_secs(1);

/// One cell of a scenario's strip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    /// Planned, not measured yet.
    Pending,
    /// Stored by an earlier, interrupted invocation of this run.
    Stored,
    /// Being measured now.
    Running,
    /// Measured; its headline figure (req/s, or a program's first figure).
    Done(Option<f64>),
    Failed,
}

/// One row of the strip.
#[derive(Clone, Debug)]
pub struct ScenarioRow {
    pub index: u32,
    pub key: String,
    pub cells: Vec<Cell>,
}

/// The trial being measured.
#[derive(Clone, Debug)]
pub struct Current {
    pub key: String,
    /// 0-based.
    pub trial: u32,
    pub started: Duration,
    pub phase: CurrentPhase,
    /// Since the phase began.
    pub phase_started: Duration,
    pub window: Duration,
    pub rates: SecondRates,
    pub errors: u64,
}

/// Where the current trial is, without the live figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurrentPhase {
    Starting,
    WarmingUp,
    Measuring,
    RunningProgram,
    Stopping,
}

/// What the view knows of a run.
#[derive(Clone, Debug)]
pub struct RunView {
    pub(crate) total: u64,
    pub(crate) done: u64,
    pub(crate) rows: Vec<ScenarioRow>,
    pub(crate) current: Option<Current>,
    /// The latest preparation step, while no trial runs.
    pub(crate) preparing: Option<String>,
    /// Wall time of each finished trial, for the ETA.
    pub(crate) trial_times: Vec<Duration>,
    /// What an unmeasured trial is expected to take, from the plan.
    pub(crate) planned_trial: Duration,
    pub(crate) probes: Vec<MachineProbe>,
    pub(crate) warnings: Vec<String>,
    /// Everything the plain lines would have said, for after the view closes.
    pub(crate) log: Vec<String>,
    pub(crate) finished: bool,
}

impl RunView {
    /// A view of `scenarios`, each planned `per_scenario` trials, of which
    /// `before` are already stored; `remaining` trials are to be measured.
    #[must_use]
    pub fn new(
        scenarios: &[PlannedScenario],
        per_scenario: u32,
        before: &StoredTrials,
        remaining: u64,
    ) -> Self {
        let rows = scenarios
            .iter()
            .map(|s| ScenarioRow {
                index: s.index,
                key: s.key.to_string(),
                cells: (0..per_scenario)
                    .map(|trial| {
                        let slot = corobench_engine::TrialSlot {
                            scenario: s.index,
                            trial,
                        };
                        if before.slots.contains(&slot) {
                            Cell::Stored
                        } else {
                            Cell::Pending
                        }
                    })
                    .collect(),
            })
            .collect();
        let planned_trial = scenarios.first().map_or(Duration::ZERO, |s| {
            let m = &s.measurement;
            m.warmup + m.duration + TRIAL_OVERHEAD_GUESS
        });
        Self {
            total: remaining,
            done: 0,
            rows,
            current: None,
            preparing: None,
            trial_times: Vec::new(),
            planned_trial,
            probes: Vec::new(),
            warnings: Vec::new(),
            log: Vec::new(),
            finished: false,
        }
    }

    /// One of the run's events, as it arrived `now` (since the view opened).
    pub fn apply(&mut self, event: RunEvent<'_>, now: Duration) {
        match event {
            RunEvent::Preparing(text) => {
                self.preparing = Some(text.to_owned());
                self.log.push(text.to_owned());
            }
            RunEvent::Notice(text) => {
                self.log.push(text.to_owned());
                self.warnings.push(text.to_owned());
            }
            RunEvent::TrialStarted { scenario, slot } => self.started(scenario, slot.trial, now),
            RunEvent::TrialPhase(phase) => self.phase(phase, now),
            RunEvent::TrialEnded { scenario, record } => self.ended(scenario, record, now),
            RunEvent::TrialsAdded(more) => self.total += more,
            RunEvent::Finished => {
                self.finished = true;
                self.current = None;
            }
        }
    }

    /// The lines the plain output would have shown, in order.
    #[must_use]
    pub fn log(&self) -> &[String] {
        &self.log
    }

    fn started(&mut self, scenario: &PlannedScenario, trial: u32, now: Duration) {
        self.preparing = None;
        let m = &scenario.measurement;
        self.planned_trial = m.warmup + m.duration + TRIAL_OVERHEAD_GUESS;
        *self.cell(scenario, trial) = Cell::Running;
        self.current = Some(Current {
            key: scenario.key.to_string(),
            trial,
            started: now,
            phase: CurrentPhase::Starting,
            phase_started: now,
            window: m.duration,
            rates: SecondRates::default(),
            errors: 0,
        });
    }

    fn phase(&mut self, phase: Phase, now: Duration) {
        let Some(current) = self.current.as_mut() else {
            return;
        };
        let next = match phase {
            Phase::Starting => CurrentPhase::Starting,
            Phase::WarmingUp => CurrentPhase::WarmingUp,
            Phase::Measuring(snapshot) => {
                current.rates.observe(now, snapshot.responses);
                current.errors = snapshot.errors;
                CurrentPhase::Measuring
            }
            Phase::RunningProgram => CurrentPhase::RunningProgram,
            Phase::Stopping => CurrentPhase::Stopping,
        };
        if next != current.phase {
            current.phase = next;
            current.phase_started = now;
        }
    }

    fn ended(&mut self, scenario: &PlannedScenario, record: &TrialRecord, now: Duration) {
        self.done += 1;
        if let Some(current) = self.current.take() {
            self.trial_times.push(now.saturating_sub(current.started));
        }
        *self.cell(scenario, record.trial_index) = match record.status {
            TrialStatus::Ok => Cell::Done(headline(record)),
            TrialStatus::Failed => Cell::Failed,
        };
        if let Some(probe) = record.probe {
            self.probes.push(probe);
        }
        let line = trial_line(scenario, record, self.done, self.total);
        if record.status == TrialStatus::Failed || !record.flags.is_empty() {
            self.warnings.push(format!(
                "{} trial {}: {}",
                scenario.key,
                record.trial_index + 1,
                trial_summary(record)
            ));
        }
        self.log.push(line);
    }

    /// The strip cell of `scenario`'s trial, added (with its row) if the
    /// plan did not have it: a search's new rate, an adaptive run's extra trial.
    fn cell(&mut self, scenario: &PlannedScenario, trial: u32) -> &mut Cell {
        let at = match self.rows.iter().position(|r| r.index == scenario.index) {
            Some(at) => at,
            None => {
                self.rows.push(ScenarioRow {
                    index: scenario.index,
                    key: scenario.key.to_string(),
                    cells: Vec::new(),
                });
                self.rows.len() - 1
            }
        };
        let cells = &mut self.rows[at].cells;
        let trial = trial as usize;
        if cells.len() <= trial {
            cells.resize(trial + 1, Cell::Pending);
        }
        &mut cells[trial]
    }

    /// Time left: the trials still to come at the mean time of those done
    /// (the plan's own figure before any), less what the current one has
    /// already spent; `None` when nothing is left. The flag says whether
    /// it is still the plan's guess.
    #[must_use]
    pub fn time_left(&self, now: Duration) -> Option<(Duration, bool)> {
        let left = self.total.saturating_sub(self.done);
        if left == 0 || self.finished {
            return None;
        }
        let guessed = self.trial_times.is_empty();
        let per_trial = if guessed {
            self.planned_trial
        } else {
            self.trial_times.iter().sum::<Duration>()
                / u32::try_from(self.trial_times.len()).unwrap_or(u32::MAX)
        };
        let spent = self
            .current
            .as_ref()
            .map_or(Duration::ZERO, |c| now.saturating_sub(c.started));
        let all = per_trial.saturating_mul(u32::try_from(left).unwrap_or(u32::MAX));
        Some((all.saturating_sub(spent.min(per_trial)), guessed))
    }
}

/// A trial's headline figure: req/s of a load, a program's first figure.
fn headline(record: &TrialRecord) -> Option<f64> {
    record
        .load
        .as_ref()
        .map(|load| load.requests_per_s)
        .or_else(|| {
            record
                .program
                .as_ref()
                .and_then(|p| p.metrics.first())
                .map(|m| m.value)
        })
}
