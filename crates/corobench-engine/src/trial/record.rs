//! What a trial that ran to its end stores: the figures of its middle
//! step, its flags, the server's resources and the leak check's verdict.

use corobench_model::{TrialFlag, TrialRecord};
use corobench_spec::PlannedScenario;

use super::{LoadWindow, Measured, Middle};
use crate::events::RunObserver;
use crate::leak::Settled;

impl Measured {
    /// This trial's record, filled into `trial` (its slot and start). A
    /// leak check that could not run is told to `observer`.
    #[must_use]
    pub fn record(
        self,
        mut trial: TrialRecord,
        scenario: &PlannedScenario,
        observer: &dyn RunObserver,
    ) -> TrialRecord {
        let stopped = self.stopped.unwrap_or_default();
        trial.probe = self.probe;
        match self.middle {
            Middle::Load(window) => {
                record_load(&mut trial, scenario, *window);
                trial.resources = stopped.series.as_ref().map(|s| s.summary);
                trial.resource_series = stopped.series.map(|s| s.samples).unwrap_or_default();
                if let Some(settled) = &self.settled {
                    record_leaks(&mut trial, settled, observer);
                }
                if let Some(url) = self.attached_url {
                    trial.flags.push(TrialFlag::AlreadyRunning { url });
                }
            }
            Middle::Idle(idle) => {
                let series = stopped.series.unwrap_or_default();
                trial.resources = Some(series.summary);
                trial.resource_series = series.samples;
                trial.idle = Some(idle);
            }
            Middle::Program(program) => {
                // A program trial keeps the server's summary, not its series.
                trial.resources = stopped.series.map(|s| s.summary);
                trial.program = Some(program);
            }
            Middle::Profile(_) => {}
        }
        trial.flags.extend(stopped.flag);
        trial
    }
}

/// The load's figures, counters and flags; responses outside the status
/// the workload expects count as errors.
fn record_load(trial: &mut TrialRecord, scenario: &PlannedScenario, mut window: LoadWindow) {
    if let Some(code) = scenario.workload.expect.status {
        window.report.count_unexpected_status(code);
    }
    trial.flags = TrialFlag::of_load(&window.report);
    trial.tasks.peak = window.peak_tasks;
    trial.counters = Some(window.counters);
    trial.probe = trial.probe.or(window.probe);
    trial.load = Some(window.report);
}

/// The leak check's verdict, judged with the window's samples (already in
/// the record): its flags, the tasks around the load, the pool's window.
fn record_leaks(trial: &mut TrialRecord, settled: &Settled, observer: &dyn RunObserver) {
    let (tasks, leaks, skipped) = settled.verdict(trial.tasks.peak, &trial.resource_series);
    if let Some(why) = skipped {
        observer.notice(&why);
    }
    trial.flags.extend(leaks);
    trial.tasks = tasks;
    trial.pool = settled.pool();
}

#[cfg(test)]
mod tests {
    use corobench_analyze::fixtures::load;
    use corobench_model::StatusCounts;

    #[test]
    fn answers_outside_the_expected_status_class_are_errors_of_their_own() {
        let mut report = load(100.0, &[100; 100]);
        report.requests = 100;
        report.status = StatusCounts {
            success: 90,
            redirection: 10,
            ..StatusCounts::default()
        };
        report.count_unexpected_status(200);
        assert_eq!(report.errors.unexpected_status, 10);
        assert!(
            (report.error_rate - 0.10).abs() < 1e-12,
            "{}",
            report.error_rate
        );
        report.count_unexpected_status(302);
        assert_eq!(report.errors.unexpected_status, 90);
        report.count_unexpected_status(404);
        assert_eq!(report.errors.unexpected_status, 100);
    }
}
