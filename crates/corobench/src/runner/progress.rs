//! What a person sees while a run goes on: on a terminal, a bar of trials
//! with the time left and a live line (scenario, trial, req/s); otherwise one
//! plain line per finished trial on stderr.

use std::io::IsTerminal as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use corobench_model::{TrialRecord, TrialStatus};
use corobench_spec::PlannedScenario;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::trial::Phase;
use crate::output::format::{latency_us, rate};

/// The run's presenter.
#[derive(Debug)]
pub struct RunProgress {
    tty: bool,
    bar: ProgressBar,
    line: ProgressBar,
    current: Mutex<Current>,
}

#[derive(Debug)]
struct Current {
    label: String,
    last: Option<(u64, Instant)>,
}

impl RunProgress {
    /// A presenter for `total_trials` trials.
    #[must_use]
    pub fn new(total_trials: u64) -> Self {
        let tty = std::io::stderr().is_terminal();
        let multi = MultiProgress::with_draw_target(if tty {
            ProgressDrawTarget::stderr_with_hz(4)
        } else {
            ProgressDrawTarget::hidden()
        });
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
            tty,
            bar,
            line,
            current: Mutex::new(Current {
                label: String::new(),
                last: None,
            }),
        }
    }

    /// A step of preparation (build, PostgreSQL, verification).
    pub fn note(&self, text: &str) {
        if self.tty {
            self.line.set_message(text.to_string());
        } else {
            eprintln!("{text}");
        }
    }

    /// A line that must stay visible (a skipped target, a warning).
    pub fn say(&self, text: &str) {
        if self.tty {
            self.line.suspend(|| eprintln!("{text}"));
        } else {
            eprintln!("{text}");
        }
    }

    pub fn begin_trial(&self, scenario: &PlannedScenario, trial_index: u32) {
        if let Ok(mut current) = self.current.lock() {
            current.label = format!("{} · trial {}", scenario.key, trial_index + 1);
            current.last = None;
        }
    }

    /// The trial's phase; while measuring, the live request rate.
    pub fn phase(&self, phase: Phase) {
        if !self.tty {
            return;
        }
        let Ok(mut current) = self.current.lock() else {
            return;
        };
        let text = match phase {
            Phase::Starting => "starting".to_string(),
            Phase::WarmingUp => "warming up".to_string(),
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

    pub fn end_trial(&self, scenario: &PlannedScenario, record: &TrialRecord) {
        self.bar.inc(1);
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
            _ => format!(
                "FAILED: {}",
                record
                    .failure
                    .as_deref()
                    .unwrap_or("no reason recorded")
                    .lines()
                    .next()
                    .unwrap_or("")
            ),
        };
        let text = format!(
            "[{}/{}] {} trial {}: {summary}",
            self.bar.position(),
            self.bar.length().unwrap_or(0),
            scenario.key,
            record.trial_index + 1
        );
        self.say(&text);
    }

    /// Adds trials an adaptive run decided to run.
    pub fn add_trials(&self, more: u64) {
        self.bar.inc_length(more);
    }

    pub fn finish(&self) {
        self.line.finish_and_clear();
        self.bar.finish_and_clear();
    }
}
