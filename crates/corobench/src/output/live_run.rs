//! The live view of a run as an observer of its events: each event goes to
//! the view's state, which its own thread draws four times a second. When
//! the run finishes (or ends with an error), the terminal is given back and
//! the lines the plain output would have shown are printed, so the run's
//! log stays in the scrollback.

use std::cell::RefCell;

use corobench_engine::{RunEvent, RunObserver, StoredTrials};
use corobench_live::{Painter, RunView};
use corobench_spec::PlannedScenario;

/// Feeds a [`RunView`] and closes it when the run is over.
#[derive(Debug)]
pub struct LiveRunPresenter {
    painter: RefCell<Option<Painter<RunView>>>,
}

impl LiveRunPresenter {
    /// Takes the terminal for a run of `scenarios` (`per_scenario` trials
    /// each, `before` already stored, `remaining` to measure).
    ///
    /// # Errors
    /// When the terminal cannot be taken.
    pub fn start(
        scenarios: &[PlannedScenario],
        per_scenario: u32,
        before: &StoredTrials,
        remaining: u64,
    ) -> std::io::Result<Self> {
        let view = RunView::new(scenarios, per_scenario, before, remaining);
        Ok(Self {
            painter: RefCell::new(Some(Painter::start(view)?)),
        })
    }

    /// Gives the terminal back and prints the run's log, once.
    fn close(&self) {
        let Some(mut painter) = self.painter.borrow_mut().take() else {
            return;
        };
        let mut log = Vec::new();
        painter.update(|view, _| log = view.log().to_vec());
        painter.close();
        for line in log {
            eprintln!("{line}");
        }
    }
}

impl RunObserver for LiveRunPresenter {
    fn on(&self, event: RunEvent<'_>) {
        if let Some(painter) = self.painter.borrow().as_ref() {
            painter.update(|view, now| view.apply(event, now));
        }
        if matches!(event, RunEvent::Finished) {
            self.close();
        }
    }
}

impl Drop for LiveRunPresenter {
    fn drop(&mut self) {
        self.close();
    }
}
