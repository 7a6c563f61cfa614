//! What the runner tells whoever watches a run. The runner never prints: it
//! emits these events, and a presenter in `output/` (a terminal with live
//! bars, plain lines for logs) or a recording observer in tests turns them
//! into whatever it needs.

use corobench_load::ProgressSnapshot;
use corobench_model::TrialRecord;
use corobench_spec::PlannedScenario;

use crate::order::TrialSlot;

/// Where a trial is.
#[derive(Clone, Copy, Debug)]
pub enum Phase {
    Starting,
    WarmingUp,
    /// The measured window, with the generator's live counters.
    Measuring(ProgressSnapshot),
    /// A program target runs to completion.
    RunningProgram,
    Stopping,
}

/// One thing that happened in a run.
#[derive(Clone, Copy, Debug)]
pub enum RunEvent<'a> {
    /// A step of preparation: a build, PostgreSQL, a verification.
    Preparing(&'a str),
    /// A line a person must see: a skipped or excluded target, a note.
    Notice(&'a str),
    TrialStarted {
        scenario: &'a PlannedScenario,
        slot: TrialSlot,
    },
    TrialPhase(Phase),
    /// The trial's record, as stored.
    TrialEnded {
        scenario: &'a PlannedScenario,
        record: &'a TrialRecord,
    },
    /// An adaptive run (`--until-ci`) added this many trials.
    TrialsAdded(u64),
    /// No more events follow.
    Finished,
}

/// Receives a run's events, in order, from the thread that runs it.
pub trait RunObserver {
    fn on(&self, event: RunEvent<'_>);

    /// Shorthand for [`RunEvent::Notice`].
    fn notice(&self, text: &str) {
        self.on(RunEvent::Notice(text));
    }

    /// Shorthand for [`RunEvent::Preparing`].
    fn preparing(&self, text: &str) {
        self.on(RunEvent::Preparing(text));
    }
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Silent;

impl RunObserver for Silent {
    fn on(&self, _event: RunEvent<'_>) {}
}
