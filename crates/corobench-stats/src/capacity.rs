//! Capacity: the highest open-loop rate at which a service level objective
//! holds, estimated from pass/fail trials at several rates, with a
//! confidence interval, by a logistic curve in ln(rate). Capacity searches
//! use the step estimator of [`crate::step_capacity`] instead, which leaves
//! rates far from the boundary no say (see there); this one suits trials
//! spread evenly around a soft boundary.
//!
//! The probability that a trial passes is modelled as a logistic curve in
//! ln(rate), P(pass) = 1/(1 + e^−(a + b·ln rate)), fitted with Firth's
//! penalised likelihood (see `src/firth.rs`), which stays finite when the
//! trials are completely separated. The capacity at level q is the rate where
//! the fitted curve crosses q: ln C = (logit q − a)/b. Its interval is a
//! seeded percentile bootstrap that keeps every rate's trial count
//! ([`CapacityResampling`]).
//!
//! Outcomes that locate no boundary are returned as [`Capacity`] variants,
//! not errors: every trial passed, every trial failed, one rate only, or a
//! pass probability that does not fall as the rate rises.

use crate::StatsError;
use crate::bootstrap::{check_resamples, percentile_interval};
use crate::firth::{self, Group};
use crate::random::SplitMix64;
use crate::sample::check_confidence;

/// How each bootstrap resample redraws the trials, keeping every rate's count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapacityResampling {
    /// Redraw each rate's trials from that rate's own outcomes, with
    /// replacement (the nonparametric stratified bootstrap). Assumes nothing
    /// about the curve, but a rate whose trials all agree never varies, so
    /// with few trials per rate it is somewhat too narrow.
    Trials,
    /// Redraw each trial as passing with the fitted curve's probability at
    /// its rate (the parametric bootstrap). Rates whose trials all agree vary
    /// too, so its coverage is closer to the nominal level with few trials,
    /// as long as the logistic shape is right.
    FittedCurve,
}

/// Settings of [`estimate_capacity`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapacityOptions {
    /// The pass probability that defines capacity, in (0, 1): 0.5 is the rate
    /// that passes as often as it fails.
    pub level: f64,
    /// Confidence of the interval, in (0, 1].
    pub confidence: f64,
    /// Bootstrap resamples (at least [`crate::bootstrap::MIN_RESAMPLES`]).
    pub resamples: usize,
    /// Seed of the resampling: equal inputs and seeds give equal intervals.
    pub seed: u64,
    /// How resamples are drawn.
    pub resampling: CapacityResampling,
}

impl Default for CapacityOptions {
    fn default() -> Self {
        Self {
            level: 0.5,
            confidence: 0.95,
            resamples: 1000,
            seed: 0,
            resampling: CapacityResampling::FittedCurve,
        }
    }
}

/// The fitted pass probability, P(pass | rate) = 1/(1 + e^−(intercept + slope·ln rate)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassCurve {
    /// a in the formula above.
    pub intercept: f64,
    /// b in the formula above; negative when passing gets rarer as the rate rises.
    pub slope: f64,
    /// Fisher-scoring iterations the fit took.
    pub iterations: usize,
}

impl PassCurve {
    /// The fitted probability that a trial at `rate` (> 0) passes.
    pub fn pass_probability(&self, rate: f64) -> f64 {
        1.0 / (1.0 + (-(self.intercept + self.slope * rate.ln())).exp())
    }

    /// The rate at which the fitted pass probability is `level` (in (0, 1));
    /// `None` unless the curve falls with the rate (slope < 0).
    pub fn rate_at(&self, level: f64) -> Option<f64> {
        let falls = self.slope < 0.0;
        let level_inside = level > 0.0 && level < 1.0;
        if !falls || !level_inside {
            return None;
        }
        let log_rate = ((level / (1.0 - level)).ln() - self.intercept) / self.slope;
        let rate = log_rate.exp();
        (!rate.is_nan()).then_some(rate)
    }
}

/// A capacity located by the fitted curve, with its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapacityCi {
    /// The rate where the fitted pass probability equals `level`.
    pub estimate: f64,
    /// Lower end of the interval (0 when it cannot be bounded below).
    pub lo: f64,
    /// Upper end of the interval (∞ when it cannot be bounded above).
    pub hi: f64,
    /// The pass probability that defines capacity.
    pub level: f64,
    /// The requested confidence.
    pub confidence: f64,
    /// The fitted curve.
    pub curve: PassCurve,
    /// The estimate lies outside the rates tried: the curve was extrapolated.
    pub extrapolated: bool,
    /// The observed pass fractions never rise from one rate to the next
    /// higher one; when false the data are noisy or the service is not
    /// monotone, and the curve smooths over it.
    pub pass_fractions_monotone: bool,
    /// Resamples drawn.
    pub resamples: usize,
    /// Resamples whose curve did not fall with the rate, so located no
    /// capacity; they are left out of the interval, and when more than a
    /// tail's worth of them, (1 − confidence)/2, the interval is (0, ∞).
    pub undefined_resamples: usize,
}

/// What pass/fail trials say about capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Capacity {
    /// The fitted curve crosses the level: an estimate with its interval.
    Estimated(CapacityCi),
    /// Every trial passed: capacity is at least the highest rate tried.
    AtLeastHighestRate {
        /// The highest rate tried.
        rate: f64,
        /// Trials in all.
        trials: usize,
    },
    /// Every trial failed: capacity is below the lowest rate tried.
    BelowLowestRate {
        /// The lowest rate tried.
        rate: f64,
        /// Trials in all.
        trials: usize,
    },
    /// Passes and failures, but at one rate only: capacity is near it, and
    /// no curve can say on which side. Try rates around it.
    SingleRate {
        /// The one rate tried.
        rate: f64,
        /// Trials that passed.
        passed: usize,
        /// Trials in all.
        trials: usize,
    },
    /// The fitted pass probability does not fall as the rate rises, so it
    /// crosses no level on the way up: the failures are not caused by load.
    NotDecreasing {
        /// The fitted curve (slope ≥ 0).
        curve: PassCurve,
    },
}

/// Trials grouped by rate, ascending, with the covariate standardised.
struct Design {
    groups: Vec<Group>,
    rates: Vec<f64>,
    /// ln(rate) = center + scale·x.
    center: f64,
    scale: f64,
}

impl Design {
    fn from_trials(trials: &[(f64, bool)]) -> Result<Self, StatsError> {
        check_trials(trials)?;
        let mut sorted = trials.to_vec();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut rates: Vec<f64> = Vec::new();
        let mut counts: Vec<(f64, f64)> = Vec::new();
        for (rate, passed) in sorted {
            if rates.last() != Some(&rate) {
                rates.push(rate);
                counts.push((0.0, 0.0));
            }
            if let Some(count) = counts.last_mut() {
                count.0 += f64::from(u8::from(passed));
                count.1 += 1.0;
            }
        }
        let (lowest, highest) = (rates[0].ln(), rates[rates.len() - 1].ln());
        let center = (lowest + highest) / 2.0;
        // One rate: any positive scale; the caller never fits it.
        let scale = if highest > lowest {
            (highest - lowest) / 2.0
        } else {
            1.0
        };
        let groups = rates
            .iter()
            .zip(&counts)
            .map(|(rate, &(passed, trials))| Group {
                x: (rate.ln() - center) / scale,
                passed,
                trials,
            })
            .collect();
        Ok(Self {
            groups,
            rates,
            center,
            scale,
        })
    }

    /// The curve on ln(rate) from coefficients on the standardised covariate.
    fn curve(&self, beta: [f64; 2], iterations: usize) -> PassCurve {
        let slope = beta[1] / self.scale;
        PassCurve {
            intercept: beta[0] - slope * self.center,
            slope,
            iterations,
        }
    }

    /// The lowest and highest rate tried (the trials are never empty).
    fn rate_range(&self) -> (f64, f64) {
        (self.rates[0], self.rates[self.rates.len() - 1])
    }

    fn fit(&self, groups: &[Group]) -> Option<PassCurve> {
        let (beta, iterations) = firth::fit(groups)?;
        Some(self.curve(beta, iterations))
    }
}

fn check_trials(trials: &[(f64, bool)]) -> Result<(), StatsError> {
    if trials.is_empty() {
        return Err(StatsError::EmptySample { what: "trials" });
    }
    for (index, &(rate, _)) in trials.iter().enumerate() {
        if !rate.is_finite() {
            return Err(StatsError::NonFinite {
                what: "trials",
                index,
                value: rate,
            });
        }
        if rate <= 0.0 {
            return Err(StatsError::ValueOutOfRange {
                what: "rate of trial",
                index,
                value: rate,
                expected: "a rate must be > 0 (the curve is fitted on its logarithm)",
            });
        }
    }
    Ok(())
}

/// Fits the pass probability against ln(rate) to `trials` = (rate > 0,
/// passed) with Firth's penalised likelihood.
///
/// Errors: no trials; a rate that is not finite or not > 0; fewer than two
/// distinct rates; no convergence (not seen in practice: the penalised
/// likelihood has a single maximum).
pub fn fit_pass_curve(trials: &[(f64, bool)]) -> Result<PassCurve, StatsError> {
    let design = Design::from_trials(trials)?;
    if design.rates.len() < 2 {
        return Err(StatsError::TooFewDistinct {
            what: "distinct rates among the trials",
            found: design.rates.len(),
            needed: 2,
            why: "a pass curve needs trials at two rates or more",
        });
    }
    design.fit(&design.groups).ok_or(StatsError::NoConvergence {
        model: "pass-probability",
        iterations: firth::MAX_ITERATIONS,
        hint: "the pass/fail trials could not be fitted; check the rates are plausible",
    })
}

/// Capacity from pass/fail `trials` = (rate > 0, passed), one entry per
/// trial: the rate where the fitted pass probability is `options.level`, with
/// a bootstrap interval at `options.confidence` (see the module documentation).
///
/// Errors: those of [`fit_pass_curve`] other than a single rate (that is
/// [`Capacity::SingleRate`]); a level outside (0, 1), a confidence outside
/// (0, 1], or too few resamples.
pub fn estimate_capacity(
    trials: &[(f64, bool)],
    options: &CapacityOptions,
) -> Result<Capacity, StatsError> {
    check_options(options)?;
    let design = Design::from_trials(trials)?;
    if let Some(boundless) = boundless_outcome(&design) {
        return Ok(boundless);
    }
    let curve = fit_pass_curve(trials)?;
    let Some(estimate) = curve.rate_at(options.level) else {
        return Ok(Capacity::NotDecreasing { curve });
    };
    let draws = bootstrap_capacities(&design, &curve, options);
    let tail_count = (1.0 - options.confidence) / 2.0 * options.resamples as f64;
    let interval = if draws.capacities.is_empty() || draws.undefined as f64 > tail_count {
        (0.0, f64::INFINITY)
    } else {
        let interval = percentile_interval(draws.capacities, options.confidence);
        (interval.lo, interval.hi)
    };
    let (lowest, highest) = design.rate_range();
    Ok(Capacity::Estimated(CapacityCi {
        estimate,
        lo: interval.0,
        hi: interval.1,
        level: options.level,
        confidence: options.confidence,
        curve,
        extrapolated: estimate < lowest || estimate > highest,
        pass_fractions_monotone: pass_fractions_monotone(&design.groups),
        resamples: options.resamples,
        undefined_resamples: draws.undefined,
    }))
}

fn check_options(options: &CapacityOptions) -> Result<(), StatsError> {
    if !(options.level > 0.0 && options.level < 1.0) {
        return Err(StatsError::ParameterOutOfRange {
            name: "pass level",
            value: options.level,
            range: "(0, 1), e.g. 0.5",
        });
    }
    check_confidence(options.confidence)?;
    check_resamples(options.resamples)
}

/// The outcomes that bound capacity on one side only, or locate it at one rate.
fn boundless_outcome(design: &Design) -> Option<Capacity> {
    let passed: f64 = design.groups.iter().map(|g| g.passed).sum();
    let trials: f64 = design.groups.iter().map(|g| g.trials).sum();
    let (lowest, highest) = design.rate_range();
    let trials_count = trials as usize;
    if passed == trials {
        Some(Capacity::AtLeastHighestRate {
            rate: highest,
            trials: trials_count,
        })
    } else if passed == 0.0 {
        Some(Capacity::BelowLowestRate {
            rate: lowest,
            trials: trials_count,
        })
    } else if design.rates.len() == 1 {
        let passed = passed as usize;
        Some(Capacity::SingleRate {
            rate: lowest,
            passed,
            trials: trials_count,
        })
    } else {
        None
    }
}

fn pass_fractions_monotone(groups: &[Group]) -> bool {
    groups
        .windows(2)
        .all(|pair| pair[1].passed * pair[0].trials <= pair[0].passed * pair[1].trials)
}

/// Capacities of the resamples that located one, and how many did not.
struct Draws {
    capacities: Vec<f64>,
    undefined: usize,
}

fn bootstrap_capacities(design: &Design, curve: &PassCurve, options: &CapacityOptions) -> Draws {
    let mut rng = SplitMix64::new(options.seed);
    let mut resample = design.groups.clone();
    let mut draws = Draws {
        capacities: Vec::with_capacity(options.resamples),
        undefined: 0,
    };
    for _ in 0..options.resamples {
        for (slot, (group, rate)) in resample
            .iter_mut()
            .zip(design.groups.iter().zip(&design.rates))
        {
            let chance = match options.resampling {
                CapacityResampling::Trials => group.passed / group.trials,
                CapacityResampling::FittedCurve => curve.pass_probability(*rate),
            };
            slot.passed = passes_drawn(&mut rng, group.trials, chance);
        }
        match resample_capacity(design, &resample, options.level) {
            Some(capacity) => draws.capacities.push(capacity),
            None => draws.undefined += 1,
        }
    }
    draws
}

/// How many of `trials` draws pass, each with probability `chance`.
fn passes_drawn(rng: &mut SplitMix64, trials: f64, chance: f64) -> f64 {
    let trials = trials as usize;
    (0..trials).filter(|_| rng.unit_f64() < chance).count() as f64
}

/// One resample's capacity: ∞ when all its trials passed, 0 when all failed
/// (the honest ends of the scale), `None` when its curve does not fall.
fn resample_capacity(design: &Design, resample: &[Group], level: f64) -> Option<f64> {
    if resample.iter().all(|g| g.passed == g.trials) {
        return Some(f64::INFINITY);
    }
    if resample.iter().all(|g| g.passed == 0.0) {
        return Some(0.0);
    }
    design.fit(resample)?.rate_at(level)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trials_at(rows: &[(f64, usize, usize)]) -> Vec<(f64, bool)> {
        rows.iter()
            .flat_map(|&(rate, passed, total)| (0..total).map(move |i| (rate, i < passed)))
            .collect()
    }

    fn estimated(capacity: Capacity) -> CapacityCi {
        match capacity {
            Capacity::Estimated(ci) => ci,
            other => panic!("expected an estimate, got {other:?}"),
        }
    }

    #[test]
    fn symmetric_data_put_capacity_at_the_middle_rate() {
        // Rates 10², 10^2.5, …, 10⁴: symmetric around 1000 on a log scale.
        let passes = [4, 3, 2, 1, 0];
        let rows: Vec<(f64, usize, usize)> = (0..5)
            .map(|i| (10f64.powf(2.0 + 0.5 * i as f64), passes[i], 4))
            .collect();
        let ci =
            estimated(estimate_capacity(&trials_at(&rows), &CapacityOptions::default()).unwrap());
        assert!((ci.estimate - 1000.0).abs() < 1e-6, "{ci:?}");
        assert!(ci.lo < 1000.0 && 1000.0 < ci.hi, "{ci:?}");
        assert!(ci.pass_fractions_monotone && !ci.extrapolated);
    }

    #[test]
    fn separated_trials_still_give_a_bounded_interval() {
        let rows = [(100.0, 3, 3), (200.0, 3, 3), (400.0, 0, 3), (800.0, 0, 3)];
        let options = CapacityOptions {
            seed: 9,
            ..CapacityOptions::default()
        };
        let ci = estimated(estimate_capacity(&trials_at(&rows), &options).unwrap());
        assert!(200.0 < ci.estimate && ci.estimate < 400.0, "{ci:?}");
        assert!(
            ci.lo < ci.estimate && ci.estimate < ci.hi && ci.hi.is_finite(),
            "{ci:?}"
        );
    }

    #[test]
    fn one_sided_outcomes_are_data() {
        let cases = [
            (
                vec![(10.0, 2, 2), (20.0, 3, 3)],
                Capacity::AtLeastHighestRate {
                    rate: 20.0,
                    trials: 5,
                },
            ),
            (
                vec![(10.0, 0, 2), (20.0, 0, 3)],
                Capacity::BelowLowestRate {
                    rate: 10.0,
                    trials: 5,
                },
            ),
            (
                vec![(10.0, 1, 3)],
                Capacity::SingleRate {
                    rate: 10.0,
                    passed: 1,
                    trials: 3,
                },
            ),
        ];
        for (rows, expected) in cases {
            let trials = trials_at(&rows);
            assert_eq!(
                estimate_capacity(&trials, &CapacityOptions::default()),
                Ok(expected)
            );
        }
    }

    #[test]
    fn passing_more_at_higher_rates_locates_no_capacity() {
        let rising = trials_at(&[(10.0, 0, 3), (20.0, 1, 3), (40.0, 3, 3)]);
        let capacity = estimate_capacity(&rising, &CapacityOptions::default()).unwrap();
        assert!(matches!(capacity, Capacity::NotDecreasing { curve } if curve.slope > 0.0));
    }

    #[test]
    fn bad_input_is_an_error() {
        let options = CapacityOptions::default();
        assert!(matches!(
            estimate_capacity(&[(0.0, true)], &options),
            Err(StatsError::ValueOutOfRange { index: 0, .. })
        ));
        assert!(matches!(
            estimate_capacity(&[(f64::NAN, true)], &options),
            Err(StatsError::NonFinite { .. })
        ));
        let bad_level = CapacityOptions {
            level: 1.0,
            ..options
        };
        assert!(matches!(
            estimate_capacity(&[(1.0, true)], &bad_level),
            Err(StatsError::ParameterOutOfRange { .. })
        ));
        assert!(matches!(
            fit_pass_curve(&[(1.0, true), (1.0, false)]),
            Err(StatsError::TooFewDistinct { .. })
        ));
    }

    #[test]
    fn the_level_moves_capacity_down_the_curve() {
        let rows = [
            (100.0, 4, 4),
            (200.0, 3, 4),
            (400.0, 2, 4),
            (800.0, 1, 4),
            (1600.0, 0, 4),
        ];
        let curve = fit_pass_curve(&trials_at(&rows)).unwrap();
        let strict = curve.rate_at(0.9).unwrap();
        let median = curve.rate_at(0.5).unwrap();
        assert!(strict < median, "{strict} vs {median}");
        assert!((curve.pass_probability(strict) - 0.9).abs() < 1e-12);
    }
}
