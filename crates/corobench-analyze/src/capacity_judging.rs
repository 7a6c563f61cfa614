//! How one trial of a capacity search is judged against the objectives,
//! and what a rate's trials say together. The search (which rate next) and
//! the estimate (where capacity lies) both read these verdicts, so the
//! runner and every report agree on each rate.

use corobench_model::{
    CapacitySettings, LoadReport, LoadWarning, RateVerdict, TrialFlag, TrialRecord, TrialStatus,
};

/// How one trial counts in the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    /// Every objective held.
    Passed,
    /// An objective broke.
    Failed,
    /// The generator could not offer the rate: it ran out of CPU while an
    /// objective broke (whose fault it was cannot be told), or it kept no
    /// schedule (requests left late, or fewer left than were due) while the
    /// server answered every request in time once sent. It counts for
    /// neither side, and the rate is tried again.
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
    // Fewer requests left than were due: the rate was not offered, so even
    // a pass says nothing about it.
    let missed = load
        .warnings
        .iter()
        .any(|w| matches!(w, LoadWarning::ScheduleMissed { .. }));
    if met && !missed {
        return Judged::Passed;
    }
    if !met && load.generator_bound() {
        return Judged::GeneratorLimited;
    }
    // Latency from each request's send is never above latency from its
    // due time, so a trial that met the objectives answered in time.
    if answered_in_time(load, settings) && (missed || schedule_not_kept(record)) {
        return Judged::GeneratorLimited;
    }
    Judged::Failed
}

fn meets(load: &LoadReport, settings: &CapacitySettings) -> bool {
    settings.slos.iter().all(|slo| slo.met_by(load))
}

/// Every objective holds on latency counted from each request's actual
/// send: the server answered in time.
fn answered_in_time(load: &LoadReport, settings: &CapacitySettings) -> bool {
    settings.slos.iter().all(|slo| slo.met_from_send(load))
}

/// The open loop did not offer its rate as planned: requests left late, or
/// fewer were sent than due.
fn schedule_not_kept(record: &TrialRecord) -> bool {
    let flagged = record
        .flags
        .iter()
        .any(|f| matches!(f, TrialFlag::ScheduleNotKept { .. }));
    let warned = record.load.iter().flat_map(|l| &l.warnings).any(|w| {
        matches!(
            w,
            LoadWarning::ScheduleNotKept { .. } | LoadWarning::ScheduleMissed { .. }
        )
    });
    flagged || warned
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

    /// Trials that judged the server at this rate.
    #[must_use]
    pub fn counted(&self) -> u32 {
        self.passed + self.failed
    }

    /// Whether the rate has had all the trials it gets: `per_rate` that
    /// judged the server. A trial the generator limited, or that broke, is
    /// tried again, up to as many more; then the rate is given up: the
    /// search must end.
    #[must_use]
    pub fn complete(&self, per_rate: u32) -> bool {
        self.counted() >= per_rate || self.limited >= per_rate || self.broken >= per_rate
    }

    /// What the rate's trials say, once it has them all.
    #[must_use]
    pub fn verdict(&self, per_rate: u32) -> RateVerdict {
        if !self.complete(per_rate) {
            return RateVerdict::Undecided;
        }
        if self.counted() < per_rate {
            return if self.limited >= per_rate {
                RateVerdict::GeneratorLimit
            } else {
                RateVerdict::Undecided
            };
        }
        if self.passed > self.failed {
            RateVerdict::Pass
        } else {
            RateVerdict::Fail
        }
    }
}

#[cfg(test)]
mod tests {
    use corobench_model::{CapacitySettings, RateVerdict, Slo, TrialRecord};

    use super::{Judged, RateTally, judge};
    use crate::fixtures::{RunBuilder, load, schedule_not_kept};

    fn settings() -> CapacitySettings {
        CapacitySettings {
            slos: vec!["p99 <= 10ms".parse::<Slo>().unwrap()],
            start_rate: 1000.0,
            growth: 2.0,
            max_rate: 1_000_000.0,
            min_rate: 62.5,
            trials_per_rate: 3,
            precision: 0.05,
            max_rates: 30,
        }
    }

    /// A trial whose requests took `sent_us` from their send and
    /// `due_us` from their intended send time (an open loop's two clocks).
    fn trial(due_us: u64, sent_us: u64, late: bool) -> TrialRecord {
        let mut record = RunBuilder::new("r", 1)
            .scenario("api", &[], "json", 4)
            .rates(&[1000.0])
            .build()
            .trials
            .remove(0);
        let mut report = load(1000.0, &[due_us; 100]);
        report.latency_uncorrected = Some(load(1000.0, &[sent_us; 100]).latency);
        record.load = Some(report);
        if late {
            schedule_not_kept(&mut record);
        }
        record
    }

    #[test]
    fn a_late_generator_is_not_the_servers_failure() {
        let settings = settings();
        // Requests waited 40 ms to leave, then were answered in 1 ms.
        assert_eq!(
            judge(&trial(40_000, 1_000, true), &settings),
            Judged::GeneratorLimited
        );
        // The server itself took 40 ms: its failure, however late requests left.
        assert_eq!(
            judge(&trial(40_000, 40_000, true), &settings),
            Judged::Failed
        );
        // On schedule, a slow answer fails; a fast one passes.
        assert_eq!(
            judge(&trial(40_000, 1_000, false), &settings),
            Judged::Failed
        );
        assert_eq!(judge(&trial(1_000, 1_000, true), &settings), Judged::Passed);
    }

    #[test]
    fn a_limited_trial_is_tried_again_and_a_rate_never_judged_is_the_generators_limit() {
        let mut tally = RateTally::new(1000.0);
        for judged in [Judged::Passed, Judged::GeneratorLimited, Judged::Passed] {
            tally.add(judged);
        }
        assert!(!tally.complete(3), "two judged trials of three");
        tally.add(Judged::Failed);
        assert_eq!(tally.verdict(3), RateVerdict::Pass);
        let mut limited = RateTally::new(2000.0);
        for _ in 0..3 {
            limited.add(Judged::GeneratorLimited);
        }
        assert_eq!(limited.verdict(3), RateVerdict::GeneratorLimit);
    }
}
