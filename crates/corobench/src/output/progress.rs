//! A live progress line on stderr, shown only when stderr is a terminal.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use corobench_report::units::{count, whole_rate};

/// One spinner line: elapsed time and a message.
#[derive(Debug)]
pub struct LiveLine {
    bar: ProgressBar,
}

impl LiveLine {
    /// A spinner on stderr; hidden automatically when stderr is not a terminal.
    #[must_use]
    pub fn new() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(250));
        Self { bar }
    }

    /// Shows the live rate and error count of a load.
    pub fn load(&self, warming_up: bool, per_s: f64, responses: u64, errors: u64) {
        let phase = if warming_up {
            "warming up"
        } else {
            "measuring"
        };
        self.bar.set_message(format!(
            "{phase}: {} req/s, {} responses, {} errors",
            whole_rate(per_s),
            count(responses),
            count(errors)
        ));
    }

    pub fn message(&self, text: impl Into<String>) {
        self.bar.set_message(text.into());
    }

    /// Removes the line.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Default for LiveLine {
    fn default() -> Self {
        Self::new()
    }
}
