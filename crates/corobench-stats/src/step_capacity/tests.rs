//! The step estimator on trials whose boundary is known.

use super::*;

fn trials(at: &[(f64, u32, u32)]) -> Vec<(f64, bool)> {
    at.iter()
        .flat_map(|&(rate, passed, failed)| {
            std::iter::repeat_n((rate, true), passed as usize)
                .chain(std::iter::repeat_n((rate, false), failed as usize))
        })
        .collect()
}

fn located(outcome: StepCapacity) -> LocatedCapacity {
    match outcome {
        StepCapacity::Located(located) => located,
        other => panic!("no capacity located: {other:?}"),
    }
}

#[test]
fn a_clean_fall_is_located_between_its_two_rates_whatever_lies_far_away() {
    let data = trials(&[
        (250.0, 3, 0),
        (500.0, 3, 0),
        (1000.0, 3, 0),
        (1040.0, 0, 3),
        (1410.0, 0, 3),
        (2000.0, 0, 3),
    ]);
    let c = located(estimate_step_capacity(&data, &StepOptions::default()).unwrap());
    assert!(
        (c.estimate - (1000.0_f64 * 1040.0).sqrt()).abs() < 1e-6,
        "{c:?}"
    );
    assert_eq!(c.bracket, (1000.0, 1040.0));
    assert!(
        c.lo >= 1000.0 && c.hi <= 1040.0 && c.hi - c.lo > 30.0,
        "{c:?}"
    );
    assert!(c.monotone);
    // Far rates have no say: more of them change nothing.
    let mut more = data.clone();
    more.extend(trials(&[(10.0, 5, 0), (100_000.0, 0, 5)]));
    let d = located(estimate_step_capacity(&more, &StepOptions::default()).unwrap());
    assert!((d.estimate - c.estimate).abs() < 1e-6);
}

#[test]
fn the_same_seed_gives_the_same_interval() {
    let data = trials(&[(100.0, 3, 0), (200.0, 2, 1), (300.0, 1, 2), (400.0, 0, 3)]);
    let options = StepOptions {
        seed: 9,
        ..StepOptions::default()
    };
    let a = estimate_step_capacity(&data, &options).unwrap();
    assert_eq!(a, estimate_step_capacity(&data, &options).unwrap());
    let a = located(a);
    assert!(a.lo <= a.estimate && a.estimate <= a.hi, "{a:?}");
    assert!(a.lo >= 100.0 && a.hi <= 400.0, "{a:?}");
}

#[test]
fn a_rise_in_the_pass_fraction_is_pooled_and_reported() {
    let data = trials(&[(100.0, 3, 0), (200.0, 1, 2), (300.0, 2, 1), (400.0, 0, 3)]);
    let c = located(estimate_step_capacity(&data, &StepOptions::default()).unwrap());
    assert!(!c.monotone);
    // 200 and 300 pool to one half, a tie, which fails: the fall is past 100.
    assert_eq!(c.bracket, (100.0, 200.0));
}

/// Issue "wrong successes", item 1: a rate at one pass and one failure is a
/// failure here as in the search, never an "every rate passed".
#[test]
fn a_rate_whose_trials_tie_fails() {
    let tied = trials(&[(100.0, 2, 0), (200.0, 1, 1), (400.0, 1, 1)]);
    let c = located(estimate_step_capacity(&tied, &StepOptions::default()).unwrap());
    assert_eq!(c.bracket, (100.0, 200.0));
    assert!(c.estimate > 100.0 && c.estimate <= 200.0, "{c:?}");
    let only_ties = trials(&[(100.0, 1, 1), (200.0, 1, 1)]);
    assert_eq!(
        estimate_step_capacity(&only_ties, &StepOptions::default()).unwrap(),
        StepCapacity::Below { rate: 100.0 }
    );
}

#[test]
fn no_fall_in_the_rates_tried_says_which_side() {
    let all_pass = trials(&[(100.0, 3, 0), (200.0, 2, 1)]);
    assert_eq!(
        estimate_step_capacity(&all_pass, &StepOptions::default()).unwrap(),
        StepCapacity::AtLeast { rate: 200.0 }
    );
    let all_fail = trials(&[(100.0, 1, 2), (200.0, 0, 3)]);
    assert_eq!(
        estimate_step_capacity(&all_fail, &StepOptions::default()).unwrap(),
        StepCapacity::Below { rate: 100.0 }
    );
}

#[test]
fn bad_input_is_an_error() {
    let options = StepOptions::default();
    assert!(estimate_step_capacity(&[], &options).is_err());
    assert!(estimate_step_capacity(&[(0.0, true)], &options).is_err());
    assert!(estimate_step_capacity(&[(f64::NAN, true)], &options).is_err());
    let bad = StepOptions {
        confidence: 1.5,
        ..options
    };
    assert!(estimate_step_capacity(&[(1.0, true)], &bad).is_err());
}

/// A search like corobench's (three trials a rate, majority decides; double
/// while passing, then bisect to 5 %) against a service whose pass
/// probability falls smoothly around `capacity`.
fn searched(capacity: f64, width: f64, start: f64, rng: &mut SplitMix64) -> Vec<(f64, bool)> {
    let pass_chance = |rate: f64| 1.0 / (1.0 + ((rate / capacity).ln() / width).exp());
    let mut out = Vec::new();
    let mut judge = |rate: f64, out: &mut Vec<(f64, bool)>| {
        let passes = (0..3)
            .filter(|_| {
                let passed = rng.unit_f64() < pass_chance(rate);
                out.push((rate, passed));
                passed
            })
            .count();
        passes >= 2
    };
    let (mut pass, mut fail) = (0.0_f64, f64::INFINITY);
    let mut rate = start;
    while fail.is_infinite() && rate < capacity * 100.0 {
        if judge(rate, &mut out) {
            pass = rate;
            rate *= 2.0;
        } else {
            fail = rate;
        }
    }
    if pass == 0.0 {
        return out;
    }
    while fail / pass > 1.05 {
        let mid = (pass * fail).sqrt();
        if judge(mid, &mut out) {
            pass = mid;
        } else {
            fail = mid;
        }
    }
    out
}

#[test]
fn the_interval_covers_a_known_capacity_in_most_searches() {
    let mut rng = SplitMix64::new(2026);
    let (runs, capacity) = (200, 5000.0);
    let mut covered = 0;
    for run in 0..runs {
        let start = capacity * (0.1 + 0.3 * rng.unit_f64());
        let data = searched(capacity, 0.02, start, &mut rng);
        let options = StepOptions {
            seed: run,
            resamples: 500,
            ..StepOptions::default()
        };
        if let Ok(StepCapacity::Located(c)) = estimate_step_capacity(&data, &options) {
            covered += usize::from(c.lo <= capacity && capacity <= c.hi);
        }
    }
    // A 95 % interval; allow for the search's own rounding of the boundary.
    assert!(
        covered >= runs as usize * 85 / 100,
        "covered {covered} of {runs}"
    );
}
