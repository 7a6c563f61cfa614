//! What a person sees while a run goes on. Two presenters of the runner's
//! events: on a terminal, a bar of trials with the time left and a live
//! line (scenario, trial, req/s); otherwise (a log, CI) one plain line per
//! preparation step and per finished trial. Both write to stderr.

use std::cell::{Cell, RefCell};
use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

use corobench_engine::{Phase, RunEvent, RunObserver};
use corobench_model::{TrialRecord, TrialStatus};
use corobench_spec::PlannedScenario;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::format::{latency_us, rate};

/// The presenter for this stderr: live bars on a terminal, lines elsewhere.
#[must_use]
pub fn run_presenter(total_trials: u64) -> Box<dyn RunObserver> {
    if std::io::stderr().is_terminal() {
        Box::new(TerminalPresenter::new(total_trials))
    } else {
        Box::new(LinePresenter::new(total_trials))
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
                    rate(per_s),
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

/// `[3/12] go-nethttp/plaintext/c=64 trial 1: 50.1k req/s, p99 2.9ms`, or
/// why it failed, on one line.
fn trial_line(scenario: &PlannedScenario, record: &TrialRecord, done: u64, total: u64) -> String {
    let summary = match (&record.status, &record.load) {
        (TrialStatus::Ok, Some(load)) => {
            let p99 = load.latency.summary.percentile_us(99.0).unwrap_or(0);
            let flags: Vec<String> = record.flags.iter().map(ToString::to_string).collect();
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!("  [{}]", flags.join("; "))
            };
            format!(
                "{} req/s, p99 {}{flags}",
                rate(load.requests_per_s),
                latency_us(p99 as f64)
            )
        }
        (TrialStatus::Ok, None) if record.idle.is_some() => idle_summary(record),
        (TrialStatus::Ok, None) => record.program.as_ref().map_or_else(String::new, |p| {
            let figures: Vec<String> = p
                .metrics
                .iter()
                .take(3)
                .map(|m| format!("{} {}", rate(m.value), m.unit))
                .collect();
            figures.join(", ")
        }),
        _ => format!(
            "FAILED: {}",
            corobench_model::failure_line(
                record.failure.as_deref().unwrap_or("no reason recorded")
            )
        ),
    };
    format!(
        "{} {} trial {}: {summary}",
        counter(done, total),
        scenario.key,
        record.trial_index + 1
    )
}

/// `RSS 46.4MiB with 2000 idle connections (settled in 1.3 s)`.
fn idle_summary(record: &TrialRecord) -> String {
    let Some(idle) = record.idle else {
        return String::new();
    };
    let settled = if idle.settled {
        format!("settled in {:.1} s", idle.waited_s)
    } else {
        format!("still changing after {:.0} s", idle.waited_s)
    };
    format!(
        "RSS {} with {} idle connections ({settled})",
        corobench_report::units::bytes(idle.rss_bytes as f64),
        idle.connections
    )
}

/// `[3/12]`. The total is what was planned when the run (or its resume)
/// began plus what a search added since; it never reads below the trials
/// done (`[1/0]` on a resume whose stored trials met the first estimate).
fn counter(done: u64, total: u64) -> String {
    format!("[{done}/{}]", total.max(done))
}

#[cfg(test)]
mod tests {
    use super::{counter, idle_summary};
    use corobench_model::{IdleMeasurement, TrialRecord};

    #[test]
    fn an_idle_trial_s_line_gives_its_settled_rss() {
        let mut record = TrialRecord::started(0, 0, 0, 0);
        record.idle = Some(IdleMeasurement {
            connections: 2000,
            rss_bytes: 48_653_926,
            settled: true,
            waited_s: 1.34,
        });
        assert_eq!(
            idle_summary(&record),
            "RSS 46.4MiB with 2000 idle connections (settled in 1.3 s)"
        );
    }

    /// Issue "wrong successes", item 13: a resumed run printed `[1/0]`.
    #[test]
    fn the_counter_never_reads_more_done_than_planned() {
        assert_eq!(counter(1, 0), "[1/1]");
        assert_eq!(counter(3, 12), "[3/12]");
    }
}
