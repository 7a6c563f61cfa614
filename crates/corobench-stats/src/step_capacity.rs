//! Capacity from pass/fail trials without a curve shape: the pass fraction
//! is fitted as a non-increasing step function of the rate (isotonic
//! regression, pool-adjacent-violators), and capacity is where it falls
//! through one half, interpolated in ln(rate) between the two rates that
//! bracket the fall.
//!
//! A rate passes when more than half of its trials pass: a tie (one pass,
//! one failure) is a failure, the rule corobench's search applies to each
//! rate, so the estimate and the search never disagree on a rate.
//!
//! Why not a logistic curve ([`crate::capacity`])? A capacity search tries
//! rates across a wide range (a quarter of the capacity to twice it) and
//! the pass/fail boundary of a real server is sharp: every trial below it
//! passes and every one above fails. A logistic fit of such data is
//! separated; Firth's penalty keeps it finite, but the slope it settles on
//! is set by the spread of rates, so rates far from the boundary pull the
//! estimate away from it (on a queue served at 1000 req/s, bracketed by
//! 1000 passing and 1040 failing, a logistic placed capacity at 829). The
//! step fit uses only the order of the rates: the far rates have no say.
//!
//! The interval is a seeded stratified bootstrap (each rate's trials redrawn
//! from that rate's own outcomes). When the outcomes are cleanly separated
//! every resample brackets the fall between the same two rates, and the
//! data say no more than that the capacity lies somewhere between them; so
//! each resample's capacity is drawn uniformly in ln(rate) within the
//! bracket it found (its interpolated crossing when the fractions at its
//! bracket are not 1 and 0). The interval then never claims more precision
//! than the rates tried can give.

use crate::StatsError;
use crate::bootstrap::{check_resamples, percentile_interval};
use crate::random::SplitMix64;
use crate::sample::check_confidence;

/// Settings of [`estimate_step_capacity`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepOptions {
    /// Confidence of the interval, in (0, 1].
    pub confidence: f64,
    /// Bootstrap resamples (at least [`crate::bootstrap::MIN_RESAMPLES`]).
    pub resamples: usize,
    /// Seed of the resampling: equal inputs and seeds give equal intervals.
    pub seed: u64,
}

impl Default for StepOptions {
    fn default() -> Self {
        Self {
            confidence: 0.95,
            resamples: 2000,
            seed: 0,
        }
    }
}

/// A capacity located between two rates tried.
#[derive(Debug, Clone, PartialEq)]
pub struct LocatedCapacity {
    /// Where the fitted pass fraction crosses one half.
    pub estimate: f64,
    /// The interval's ends (0 or ∞ where resamples fell outside the rates).
    pub lo: f64,
    pub hi: f64,
    pub confidence: f64,
    /// The highest rate fitted to pass more than half the time, and the next
    /// rate tried above it.
    pub bracket: (f64, f64),
    /// The observed pass fractions never rise from one rate to the next;
    /// when false the fit pooled rates (noise, or failures not caused by load).
    pub monotone: bool,
    /// Every resample's capacity, in draw order (for ratios of two scenarios).
    pub draws: Vec<f64>,
}

/// What the trials say about capacity.
#[derive(Debug, Clone, PartialEq)]
pub enum StepCapacity {
    Located(LocatedCapacity),
    /// The fitted pass fraction is above one half at every rate tried.
    AtLeast {
        rate: f64,
    },
    /// The fitted pass fraction is one half or below at every rate tried.
    Below {
        rate: f64,
    },
}

/// Trials at one rate.
#[derive(Debug, Clone, Copy)]
struct Rate {
    rate: f64,
    ln_rate: f64,
    passed: f64,
    trials: f64,
}

/// Capacity from `trials` = (rate > 0, passed), one entry per trial.
///
/// Errors: no trials; a rate that is not finite or not > 0; a confidence
/// outside (0, 1]; too few resamples.
pub fn estimate_step_capacity(
    trials: &[(f64, bool)],
    options: &StepOptions,
) -> Result<StepCapacity, StatsError> {
    check_confidence(options.confidence)?;
    check_resamples(options.resamples)?;
    let rates = group(trials)?;
    let fitted = non_increasing(&rates);
    let Some(at) = crossing(&fitted) else {
        return Ok(outside(&rates, &fitted));
    };
    let estimate = interpolate(&rates, &fitted, at).exp();
    let draws = bootstrap(&rates, options);
    let interval = percentile_interval(draws.clone(), options.confidence);
    Ok(StepCapacity::Located(LocatedCapacity {
        estimate,
        lo: interval.lo,
        hi: interval.hi,
        confidence: options.confidence,
        bracket: (rates[at].rate, rates[at + 1].rate),
        monotone: rates
            .windows(2)
            .all(|w| w[1].passed * w[0].trials <= w[0].passed * w[1].trials),
        draws,
    }))
}

fn group(trials: &[(f64, bool)]) -> Result<Vec<Rate>, StatsError> {
    if trials.is_empty() {
        return Err(StatsError::EmptySample { what: "trials" });
    }
    if let Some((index, &(rate, _))) = trials
        .iter()
        .enumerate()
        .find(|(_, (rate, _))| !(rate.is_finite() && *rate > 0.0))
    {
        return Err(StatsError::ValueOutOfRange {
            what: "rate of trial",
            index,
            value: rate,
            expected: "a rate must be finite and > 0",
        });
    }
    let mut sorted = trials.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rates: Vec<Rate> = Vec::new();
    for (rate, passed) in sorted {
        let ln_rate = rate.ln();
        if rates.last().is_none_or(|r| r.ln_rate != ln_rate) {
            rates.push(Rate {
                rate,
                ln_rate,
                passed: 0.0,
                trials: 0.0,
            });
        }
        if let Some(last) = rates.last_mut() {
            last.passed += f64::from(u8::from(passed));
            last.trials += 1.0;
        }
    }
    Ok(rates)
}

/// The weighted least-squares non-increasing fit of the pass fractions
/// (pool adjacent violators), one value per rate.
fn non_increasing(rates: &[Rate]) -> Vec<f64> {
    // Blocks of pooled rates: (passed, trials, how many rates).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(rates.len());
    for rate in rates {
        blocks.push((rate.passed, rate.trials, 1));
        while blocks.len() > 1 {
            let (p1, t1, n1) = blocks[blocks.len() - 1];
            let (p0, t0, n0) = blocks[blocks.len() - 2];
            if p0 / t0 >= p1 / t1 {
                break;
            }
            blocks.truncate(blocks.len() - 2);
            blocks.push((p0 + p1, t0 + t1, n0 + n1));
        }
    }
    blocks
        .iter()
        .flat_map(|&(passed, trials, n)| std::iter::repeat_n(passed / trials, n))
        .collect()
}

/// Whether a fitted pass fraction is a pass: more than one half (a tie
/// fails).
fn passes(fraction: f64) -> bool {
    fraction > 0.5
}

/// The last rate fitted to pass, when a rate fitted to fail follows it.
fn crossing(fitted: &[f64]) -> Option<usize> {
    let passing = fitted.iter().take_while(|p| passes(**p)).count();
    (passing > 0 && passing < fitted.len()).then(|| passing - 1)
}

/// ln of the rate where the fit falls through one half between rate `at`
/// and the next.
fn interpolate(rates: &[Rate], fitted: &[f64], at: usize) -> f64 {
    let (p0, p1) = (fitted[at], fitted[at + 1]);
    let t = (p0 - 0.5) / (p0 - p1);
    rates[at].ln_rate + t * (rates[at + 1].ln_rate - rates[at].ln_rate)
}

fn outside(rates: &[Rate], fitted: &[f64]) -> StepCapacity {
    if fitted.first().is_some_and(|p| passes(*p)) {
        StepCapacity::AtLeast {
            rate: rates[rates.len() - 1].rate,
        }
    } else {
        StepCapacity::Below {
            rate: rates[0].rate,
        }
    }
}

/// One capacity per resample: ∞ or 0 where the resample's fit stays above
/// or below one half at every rate.
fn bootstrap(rates: &[Rate], options: &StepOptions) -> Vec<f64> {
    let mut rng = SplitMix64::new(options.seed);
    let mut resample = rates.to_vec();
    (0..options.resamples)
        .map(|_| {
            for (slot, rate) in resample.iter_mut().zip(rates) {
                let chance = rate.passed / rate.trials;
                slot.passed = (0..rate.trials as usize)
                    .filter(|_| rng.unit_f64() < chance)
                    .count() as f64;
            }
            let fitted = non_increasing(&resample);
            match crossing(&fitted) {
                None if passes(fitted[0]) => f64::INFINITY,
                None => 0.0,
                Some(at) => draw_within(&resample, &fitted, at, &mut rng).exp(),
            }
        })
        .collect()
}

/// A resample's ln capacity: uniform within its bracket where its fit
/// falls from 1 to 0 there (the trials locate the fall no closer), its
/// interpolated crossing otherwise.
fn draw_within(rates: &[Rate], fitted: &[f64], at: usize, rng: &mut SplitMix64) -> f64 {
    if fitted[at] == 1.0 && fitted[at + 1] == 0.0 {
        let (lo, hi) = (rates[at].ln_rate, rates[at + 1].ln_rate);
        lo + rng.unit_f64() * (hi - lo)
    } else {
        interpolate(rates, fitted, at)
    }
}

#[cfg(test)]
mod tests;
