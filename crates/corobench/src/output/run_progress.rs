//! What a person sees while a run goes on. Three presenters of the runner's
//! events: the live view (see [`super::live_run`]) when stdout and stderr
//! are terminals; with `--no-tui` on a terminal, a bar of trials with the
//! time left and a live line (scenario, trial, req/s); otherwise (a log,
//! CI) one plain line per preparation step and per finished trial. All
//! write to stderr.

use std::cell::{Cell, RefCell};
use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

use corobench_engine::{Phase, RunEvent, RunObserver, StoredTrials};
use corobench_live::trial_line;
use corobench_spec::PlannedScenario;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::live_run::LiveRunPresenter;
use corobench_report::units::whole_rate;

/// A run's trials, for its presenter.
#[derive(Clone, Copy, Debug)]
pub struct TrialsAhead<'a> {
    pub scenarios: &'a [PlannedScenario],
    pub per_scenario: u32,
    /// Stored by an earlier invocation (a resumed run).
    pub before: &'a StoredTrials,
    /// Still to measure.
    pub remaining: u64,
}

/// The presenter for this terminal: the live view when stdout and stderr
/// are terminals (unless `no_tui`), bars when only stderr is, lines elsewhere.
#[must_use]
pub fn run_presenter(trials: TrialsAhead<'_>, no_tui: bool) -> Box<dyn RunObserver> {
    if !no_tui && corobench_live::available() {
        let live = LiveRunPresenter::start(
            trials.scenarios,
            trials.per_scenario,
            trials.before,
            trials.remaining,
        );
        if let Ok(live) = live {
            return Box::new(live);
        }
    }
    if std::io::stderr().is_terminal() {
        Box::new(TerminalPresenter::new(trials.remaining))
    } else {
        Box::new(LinePresenter::new(trials.remaining))
    }
}

/// One line per event worth keeping, for logs.
#[derive(Debug)]
pub struct LinePresenter {
    done: Cell<u64>,
    total: Cell<u64>,
}

impl LinePresenter {
    #[must_use]
    pub fn new(total_trials: u64) -> Self {
        Self {
            done: Cell::new(0),
            total: Cell::new(total_trials),
        }
    }
}

impl RunObserver for LinePresenter {
    fn on(&self, event: RunEvent<'_>) {
        match event {
            RunEvent::Preparing(text) | RunEvent::Notice(text) => eprintln!("{text}"),
            RunEvent::TrialEnded { scenario, record } => {
                self.done.set(self.done.get() + 1);
                eprintln!(
                    "{}",
                    trial_line(scenario, record, self.done.get(), self.total.get())
                );
            }
            RunEvent::TrialsAdded(more) => self.total.set(self.total.get() + more),
            RunEvent::TrialStarted { .. } | RunEvent::TrialPhase(_) | RunEvent::Finished => {}
        }
    }
}

/// Preparation steps and notices, one line each after the command's name
/// (`verify: building go-nethttp`), for commands that run no trials.
#[derive(Debug)]
pub struct StepLines(pub &'static str);

impl RunObserver for StepLines {
    fn on(&self, event: RunEvent<'_>) {
        if let RunEvent::Preparing(text) | RunEvent::Notice(text) = event {
            eprintln!("{}: {text}", self.0);
        }
    }
}

/// A bar of trials and a live line, redrawn four times a second.
#[derive(Debug)]
pub struct TerminalPresenter {
    bar: ProgressBar,
    line: ProgressBar,
    current: RefCell<Current>,
}

/// The trial on the live line, and the last reading of its responses.
#[derive(Debug, Default)]
struct Current {
    label: String,
    last: Option<(u64, Instant)>,
}

impl TerminalPresenter {
    #[must_use]
    pub fn new(total_trials: u64) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        let bar = multi.add(ProgressBar::new(total_trials));
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:30} {pos}/{len} trials  elapsed {elapsed_precise}  left ~{eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let line = multi.add(ProgressBar::new_spinner());
        line.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        line.enable_steady_tick(Duration::from_millis(250));
        Self {
            bar,
            line,
            current: RefCell::new(Current::default()),
        }
    }

    /// A line that must stay visible above the bars.
    fn say(&self, text: &str) {
        self.line.suspend(|| eprintln!("{text}"));
    }

    /// The trial's phase; while measuring, the live request rate.
    fn phase(&self, phase: Phase) {
        let mut current = self.current.borrow_mut();
        let text = match phase {
            Phase::Starting => "starting".to_string(),
            Phase::WarmingUp => "warming up".to_string(),
            Phase::RunningProgram => "running the program".to_string(),
            Phase::Stopping => "idle, leak check, stop".to_string(),
            Phase::Measuring(snapshot) => {
                let now = Instant::now();
                let per_s = current.last.map_or(0.0, |(responses, at)| {
                    snapshot.responses.saturating_sub(responses) as f64
                        / now.duration_since(at).as_secs_f64().max(1e-3)
                });
                current.last = Some((snapshot.responses, now));
                format!(
                    "measuring: {} req/s, {} errors",
                    whole_rate(per_s),
                    snapshot.errors
                )
            }
        };
        self.line.set_message(format!("{}: {text}", current.label));
    }
}

impl RunObserver for TerminalPresenter {
    fn on(&self, event: RunEvent<'_>) {
        match event {
            RunEvent::Preparing(text) => self.line.set_message(text.to_string()),
            RunEvent::Notice(text) => self.say(text),
            RunEvent::TrialStarted { scenario, slot } => {
                *self.current.borrow_mut() = Current {
                    label: format!("{} · trial {}", scenario.key, slot.trial + 1),
                    last: None,
                };
            }
            RunEvent::TrialPhase(phase) => self.phase(phase),
            RunEvent::TrialEnded { scenario, record } => {
                self.bar.inc(1);
                let total = self.bar.length().unwrap_or(0);
                self.say(&trial_line(scenario, record, self.bar.position(), total));
            }
            RunEvent::TrialsAdded(more) => self.bar.inc_length(more),
            RunEvent::Finished => {
                self.line.finish_and_clear();
                self.bar.finish_and_clear();
            }
        }
    }
}
