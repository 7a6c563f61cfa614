//! The order trials run in: round by round (trial k of every scenario before
//! trial k+1 of any), each round in its own seeded shuffle, so that drift of
//! the machine over time hits every scenario alike and a rerun with the same
//! seed runs in the same order.

use std::collections::BTreeSet;

use corobench_stats::random::SplitMix64;

/// One trial to run: the scenario's index in the plan and the trial's index
/// within that scenario (round k runs trial k of every scenario).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TrialSlot {
    pub scenario: u32,
    pub trial: u32,
}

/// The trials of round `round` for `scenarios`, shuffled by `seed`, minus
/// those already `done` (a resumed run).
#[must_use]
pub fn round(
    scenarios: &[u32],
    round: u32,
    seed: u64,
    done: &BTreeSet<TrialSlot>,
) -> Vec<TrialSlot> {
    // Shuffle everything, then drop what is done: a resumed run keeps the
    // original order of the trials it still has to run.
    let mut slots: Vec<TrialSlot> = scenarios
        .iter()
        .map(|&scenario| TrialSlot {
            scenario,
            trial: round,
        })
        .collect();
    SplitMix64::new(seed ^ u64::from(round).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .shuffle(&mut slots);
    slots.retain(|slot| !done.contains(slot));
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_holds_each_scenario_once_in_a_seeded_order() {
        let scenarios: Vec<u32> = (0..10).collect();
        let done = BTreeSet::new();
        let a = round(&scenarios, 0, 7, &done);
        assert_eq!(a, round(&scenarios, 0, 7, &done), "same seed, same order");
        assert_ne!(
            a,
            round(&scenarios, 0, 8, &done),
            "another seed, another order"
        );
        assert_ne!(
            a.iter().map(|s| s.scenario).collect::<Vec<_>>(),
            round(&scenarios, 1, 7, &done)
                .iter()
                .map(|s| s.scenario)
                .collect::<Vec<_>>()
        );
        let mut seen: Vec<u32> = a.iter().map(|s| s.scenario).collect();
        seen.sort_unstable();
        assert_eq!(seen, scenarios);
        assert!(a.iter().all(|s| s.trial == 0));
    }

    #[test]
    fn completed_trials_are_left_out() {
        let slot = |scenario, trial| TrialSlot { scenario, trial };
        let done: BTreeSet<TrialSlot> = [slot(3, 1), slot(5, 1)].into();
        let slots = round(&[1, 3, 5, 7], 1, 1, &done);
        let mut left: Vec<u32> = slots.iter().map(|s| s.scenario).collect();
        left.sort_unstable();
        assert_eq!(left, [1, 7]);
    }
}
