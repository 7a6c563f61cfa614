//! How one trial of a capacity search is judged against the objectives,
//! and what a rate's trials say together. The search (which rate next) and
//! the estimate (where capacity lies) both read these verdicts, so the
//! runner and every report agree on each rate.

use corobench_model::{CapacitySettings, LoadReport, RateVerdict, TrialRecord, TrialStatus};

/// How one trial counts in the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    /// Every objective held.
    Passed,
    /// An objective broke.
    Failed,
    /// The generator ran out of CPU and an objective broke: whose fault it
    /// was cannot be told, so it counts for neither side.
    GeneratorLimited,
    /// The trial measured nothing (the target crashed, ...).
    Broken,
}

/// Judges one stored trial against the objectives.
#[must_use]
pub fn judge(record: &TrialRecord, settings: &CapacitySettings) -> Judged {
    let Some(load) = record.load.as_ref() else {
        return Judged::Broken;
    };
    if record.status == TrialStatus::Failed {
        return Judged::Broken;
    }
    let met = meets(load, settings);
    if !met && load.generator_bound() {
        return Judged::GeneratorLimited;
    }
    if met { Judged::Passed } else { Judged::Failed }
}

fn meets(load: &LoadReport, settings: &CapacitySettings) -> bool {
    settings.slos.iter().all(|slo| slo.met_by(load))
}

/// The trials of one rate, counted by how they were judged.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateTally {
    pub rate: f64,
    pub passed: u32,
    pub failed: u32,
    pub limited: u32,
    pub broken: u32,
}

impl RateTally {
    #[must_use]
    pub fn new(rate: f64) -> Self {
        Self {
            rate,
            ..Self::default()
        }
    }

    pub fn add(&mut self, judged: Judged) {
        match judged {
            Judged::Passed => self.passed += 1,
            Judged::Failed => self.failed += 1,
            Judged::GeneratorLimited => self.limited += 1,
            Judged::Broken => self.broken += 1,
        }
    }

    /// Trials that said something about the rate.
    #[must_use]
    pub fn counted(&self) -> u32 {
        self.passed + self.failed + self.limited
    }

    /// Whether the rate has had all the trials it gets.
    #[must_use]
    pub fn complete(&self, per_rate: u32) -> bool {
        // A rate whose trials keep breaking gets as many tries again, then
        // is given up: the search must end.
        self.counted() >= per_rate || self.broken >= per_rate
    }

    /// What the rate's trials say, once it has them all.
    #[must_use]
    pub fn verdict(&self, per_rate: u32) -> RateVerdict {
        if !self.complete(per_rate) || self.passed + self.failed + self.limited == 0 {
            return RateVerdict::Undecided;
        }
        if self.limited > self.passed + self.failed {
            return RateVerdict::GeneratorLimit;
        }
        if self.passed > self.failed {
            RateVerdict::Pass
        } else {
            RateVerdict::Fail
        }
    }
}
