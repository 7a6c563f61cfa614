//! The profile trial (`[run] profile`): after a scenario's measured trials,
//! one more trial of it, run by the same skeleton with a profile as its
//! middle step (a fresh server, warm-up, window, a profiler attached from
//! the end of the warm-up until the load stops). Its load figures are
//! thrown away: only the folded stacks are kept, in the store's `profiles`
//! table, never among the trials, so the measured trials are neither
//! perturbed by the profiler nor mixed with this one.

use corobench_model::{ProfileOutcome, ProfileRecord};
use corobench_profile::FREQUENCY_HZ;
use corobench_spec::PlannedScenario;

use super::{Halt, Measured, Middle, Place, Step, run};
use crate::events::RunObserver;

/// Takes the profile of `scenario` at `place`; `None` when Ctrl-C
/// interrupted it. A profile that cannot be taken is kept with the reason.
pub fn profile<P: Place>(
    place: &P,
    scenario: &PlannedScenario,
    observer: &dyn RunObserver,
) -> Option<ProfileRecord> {
    let started_at_unix_ms = crate::wall_clock::unix_ms();
    let outcome = if scenario.program.is_some() {
        ProfileOutcome::Skipped {
            reason: "a program target runs to completion on its own; only servers under load \
                     are profiled"
                .to_owned(),
        }
    } else {
        match run(place, scenario, Step::Profile, observer) {
            Ok(Measured {
                middle: Middle::Profile(outcome),
                ..
            }) => outcome,
            Ok(_) => unreachable_middle(),
            Err(Halt::Interrupted) => return None,
            Err(Halt::Failed(why)) => ProfileOutcome::Skipped {
                reason: format!("the profile trial failed: {why}"),
            },
        }
    };
    Some(ProfileRecord {
        scenario_index: scenario.index,
        frequency_hz: FREQUENCY_HZ,
        started_at_unix_ms,
        outcome,
    })
}

/// The skeleton returns what its step measured: a profile step a profile.
fn unreachable_middle() -> ProfileOutcome {
    ProfileOutcome::Skipped {
        reason: "the profile trial measured no profile".to_owned(),
    }
}
