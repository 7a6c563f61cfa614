//! The order trials run in: round by round (trial k of every scenario before
//! trial k+1 of any), each round in its own seeded shuffle, so that drift of
//! the machine over time hits every scenario alike and a rerun with the same
//! seed runs in the same order.

use std::collections::BTreeSet;

/// One trial to run: (scenario index, trial index).
pub type TrialSlot = (u32, u32);

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
    let mut slots: Vec<TrialSlot> = scenarios.iter().map(|&s| (s, round)).collect();
    let mut rng = SplitMix64(seed ^ u64::from(round).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    // Fisher–Yates with a seeded generator: same seed, same order.
    for i in (1..slots.len()).rev() {
        let j = usize::try_from(rng.next() % (i as u64 + 1)).unwrap_or(0);
        slots.swap(i, j);
    }
    slots.retain(|slot| !done.contains(slot));
    slots
}

/// A tiny, well-known 64-bit generator; enough to shuffle, and stable forever
/// (a library's generator may change its stream between versions, which
/// would change the order of a resumed run).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
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
            a.iter().map(|s| s.0).collect::<Vec<_>>(),
            round(&scenarios, 1, 7, &done)
                .iter()
                .map(|s| s.0)
                .collect::<Vec<_>>()
        );
        let mut seen: Vec<u32> = a.iter().map(|s| s.0).collect();
        seen.sort_unstable();
        assert_eq!(seen, scenarios);
        assert!(a.iter().all(|s| s.1 == 0));
    }

    #[test]
    fn completed_trials_are_left_out() {
        let done: BTreeSet<TrialSlot> = [(3, 1), (5, 1)].into();
        let slots = round(&[1, 3, 5, 7], 1, 1, &done);
        let mut left: Vec<u32> = slots.iter().map(|s| s.0).collect();
        left.sort_unstable();
        assert_eq!(left, [1, 7]);
    }
}
