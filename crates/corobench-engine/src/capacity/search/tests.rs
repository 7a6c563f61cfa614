//! The search walked against services whose capacity is known.

use corobench_model::{CapacitySettings, RateVerdict, Slo};

use super::{Finish, Judged, Next, RateTally, next, round_rate};

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

/// Walks the search to its end, judging each trial with `judge(rate, k)`
/// (k: the trial's number at that rate); returns the rates tried and why
/// it ended.
fn walk(
    settings: &CapacitySettings,
    judge: impl Fn(f64, u32) -> Judged,
) -> (Vec<RateTally>, Finish) {
    let mut tried: Vec<RateTally> = Vec::new();
    for _ in 0..1000 {
        match next(&tried, settings) {
            Next::Done(finish) => return (tried, finish),
            Next::Trial(rate) => {
                let position = tried
                    .iter()
                    .position(|t| t.rate == rate)
                    .unwrap_or_else(|| {
                        tried.push(RateTally::new(rate));
                        tried.len() - 1
                    });
                let tally = &mut tried[position];
                let k = tally.passed + tally.failed + tally.limited + tally.broken;
                tally.add(judge(rate, k));
            }
        }
    }
    panic!("the search did not end: {tried:?}");
}

/// The highest passing and the lowest failing rate.
fn bracket(tried: &[RateTally], settings: &CapacitySettings) -> (f64, f64) {
    let with = |verdict: RateVerdict| {
        tried
            .iter()
            .filter(move |t| t.verdict(settings.trials_per_rate) == verdict)
            .map(|t| t.rate)
    };
    let pass = with(RateVerdict::Pass).fold(0.0, f64::max);
    let fail = with(RateVerdict::Fail).fold(f64::INFINITY, f64::min);
    (pass, fail)
}

fn sharp(capacity: f64) -> impl Fn(f64, u32) -> Judged {
    move |rate, _| {
        if rate <= capacity {
            Judged::Passed
        } else {
            Judged::Failed
        }
    }
}

#[test]
fn grows_then_narrows_around_a_known_capacity() {
    let settings = settings();
    for capacity in [1500.0, 7_300.0, 48_000.0, 123_456.0] {
        let (tried, finish) = walk(&settings, sharp(capacity));
        assert_eq!(finish, Finish::Converged, "{capacity}: {tried:?}");
        let (pass, fail) = bracket(&tried, &settings);
        assert!(
            pass <= capacity && capacity < fail,
            "{capacity}: {pass}..{fail}"
        );
        // Rounding rates to three figures may leave the bracket a little wider.
        assert!(
            fail / pass <= 1.0 + settings.precision + 0.01,
            "{capacity}: {pass}..{fail}"
        );
        assert!(tried.iter().all(|t| t.passed + t.failed == 3), "{tried:?}");
    }
}

#[test]
fn one_noisy_trial_does_not_end_the_search() {
    let settings = settings();
    // The first trial at every rate fails, whatever the rate.
    let noisy = |rate: f64, k: u32| {
        if k == 0 || rate > 20_000.0 {
            Judged::Failed
        } else {
            Judged::Passed
        }
    };
    let (tried, _) = walk(&settings, noisy);
    let (pass, fail) = bracket(&tried, &settings);
    assert!(pass <= 20_000.0 && 20_000.0 < fail, "{pass}..{fail}");
}

#[test]
fn goes_down_when_the_first_rate_fails_and_stops_at_the_floor() {
    let settings = settings();
    let (tried, finish) = walk(&settings, sharp(300.0));
    assert_eq!(finish, Finish::Converged);
    let (pass, fail) = bracket(&tried, &settings);
    assert!(pass <= 300.0 && 300.0 < fail, "{pass}..{fail}");
    let (tried, finish) = walk(&settings, sharp(1.0));
    assert_eq!(finish, Finish::MinRate, "{tried:?}");
    let lowest = tried.iter().map(|t| t.rate).fold(f64::INFINITY, f64::min);
    assert!((lowest - 62.5).abs() < 1e-9, "{lowest}");
}

#[test]
fn stops_at_the_generator_limit_and_at_max_rate() {
    let settings = settings();
    let limited = |rate: f64, _| {
        if rate > 10_000.0 {
            Judged::GeneratorLimited
        } else {
            Judged::Passed
        }
    };
    let (tried, finish) = walk(&settings, limited);
    assert_eq!(finish, Finish::GeneratorLimit);
    assert!(bracket(&tried, &settings).1.is_infinite());
    let capped = CapacitySettings {
        max_rate: 5000.0,
        ..settings
    };
    let (tried, finish) = walk(&capped, sharp(1e9));
    assert_eq!(finish, Finish::MaxRate);
    assert_eq!(tried.last().map(|t| t.rate), Some(5000.0));
}

#[test]
fn a_rate_that_keeps_breaking_ends_the_search() {
    let settings = settings();
    let broken = |rate: f64, _| {
        if rate > 3000.0 {
            Judged::Broken
        } else {
            Judged::Passed
        }
    };
    let (tried, finish) = walk(&settings, broken);
    assert_eq!(finish, Finish::Broken);
    assert_eq!(tried.last().map(|t| t.broken), Some(3));
}

#[test]
fn rates_read_well() {
    assert!((round_rate(1414.2135) - 1410.0).abs() < 1e-9);
    assert_eq!(round_rate(62.5).to_string(), "62.5");
    assert_eq!(round_rate(123_456.0).to_string(), "123000");
    assert_eq!(round_rate(0.1234).to_string(), "0.123");
}

/// Issue "wrong successes", item 1: with two trials a rate, a rate at one
/// pass and one failure fails for the search and for the estimate alike;
/// the estimate must not say "every rate passed" after a bisection.
#[test]
fn a_rate_whose_trials_tie_fails_for_search_and_estimate_alike() {
    use corobench_stats::{StepCapacity, StepOptions, estimate_step_capacity};
    let settings = CapacitySettings {
        trials_per_rate: 2,
        ..settings()
    };
    // Above 5000 req/s the first trial at a rate passes and the second fails.
    let (tried, finish) = walk(&settings, |rate, k| {
        if rate <= 5000.0 || k == 0 {
            Judged::Passed
        } else {
            Judged::Failed
        }
    });
    assert_eq!(finish, Finish::Converged, "{tried:?}");
    let (pass, fail) = bracket(&tried, &settings);
    assert!(pass <= 5000.0 && 5000.0 < fail, "{pass}..{fail}");
    let outcomes: Vec<(f64, bool)> = tried
        .iter()
        .flat_map(|t| {
            std::iter::repeat_n((t.rate, true), t.passed as usize)
                .chain(std::iter::repeat_n((t.rate, false), t.failed as usize))
        })
        .collect();
    match estimate_step_capacity(&outcomes, &StepOptions::default()).unwrap() {
        StepCapacity::Located(c) => assert_eq!(c.bracket, (pass, fail), "{tried:?}"),
        other => panic!("the estimate disagrees with the search: {other:?} for {tried:?}"),
    }
}
