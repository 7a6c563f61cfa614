//! Gunther's Universal Scalability Law fitted to throughput measured at
//! several concurrencies:
//!
//! X(N) = λN / (1 + σ(N − 1) + κN(N − 1))
//!
//! λ is the throughput of one client, σ the share of the work that serialises
//! (contention) and κ the cost of keeping N clients coherent with each other
//! (crosstalk). With κ > 0 throughput peaks at N* = √((1 − σ)/κ) and falls
//! beyond it (the retrograde region); with κ = 0 it levels off at λ/σ.
//!
//! The fit is ordinary least squares on X (as `scipy.optimize.curve_fit`),
//! solved by Levenberg–Marquardt with Marquardt's diagonal scaling, which
//! makes the steps independent of the very different sizes of λ (req/s),
//! σ (a fraction) and κ (often 10⁻⁵), and Nielsen's damping update, which
//! keeps the steps from overshooting back and forth when the fit is poor. The constraints λ, σ, κ ≥ 0 are kept by
//! projection: a parameter at 0 whose gradient points below 0 is held there
//! for the step, and every step is clipped at 0. Parameters at a bound come
//! out exactly 0, which is how a linear or a purely contended system shows.

use crate::StatsError;
use crate::bootstrap::{Interval, check_resamples, percentile_interval};
use crate::linalg::solve_linear;
use crate::random::SplitMix64;
use crate::sample::check_confidence;

/// Iterations [`fit_usl`] runs before it reports [`StatsError::NoConvergence`].
pub const MAX_ITERATIONS: usize = 1000;

/// Distinct concurrencies the fit needs: three parameters cannot be told
/// apart with fewer (two concurrencies fit any λ and σ/κ mix exactly).
pub const MIN_DISTINCT_CONCURRENCIES: usize = 3;

/// κ counts as 0 when its term, κN(N − 1) at the largest concurrency measured,
/// is below this share of the denominator: too small to change any fitted
/// throughput in the measured range beyond rounding.
pub const KAPPA_ZERO_SHARE: f64 = 1e-9;

/// Stop when every free parameter's gradient is this nearly orthogonal to the
/// residuals (MINPACK's `gtol` test, the cosine of the angle).
const GRADIENT_TOLERANCE: f64 = 1e-12;

/// Stop when an accepted step lowers the residual sum of squares by less than
/// this share: the sum cannot be resolved more finely in double precision.
const COST_TOLERANCE: f64 = 1e-15;

/// Damping range of the Levenberg–Marquardt steps; past the top no step,
/// however short, lowers the cost, so the current point is a minimum.
const INITIAL_DAMPING: f64 = 1e-3;
const MIN_DAMPING: f64 = 1e-12;
const MAX_DAMPING: f64 = 1e16;

/// Where a fitted curve peaks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UslPeak {
    /// N* = √((1 − σ)/κ), or 1 when σ ≥ 1 or that root is below 1 (throughput
    /// falls from the first client on).
    pub concurrency: f64,
    /// X(N*), the most throughput the fitted curve reaches.
    pub throughput: f64,
    /// Whether N* lies within the concurrencies measured (not extrapolated).
    pub within_measured_range: bool,
}

/// A least-squares USL fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UslFit {
    /// λ > 0: throughput at one client (the slope at the origin).
    pub lambda: f64,
    /// σ ≥ 0: contention.
    pub sigma: f64,
    /// κ ≥ 0: crosstalk (coherency).
    pub kappa: f64,
    /// The peak; `None` when κ is 0 to [`KAPPA_ZERO_SHARE`]: no retrograde region.
    pub peak: Option<UslPeak>,
    /// Σ (Xᵢ − X(Nᵢ))² at the fitted parameters.
    pub residual_sum_of_squares: f64,
    /// Levenberg–Marquardt iterations taken.
    pub iterations: usize,
    /// Number of points fitted.
    pub points: usize,
    /// Largest concurrency among the points.
    pub max_concurrency: f64,
}

impl UslFit {
    /// The fitted throughput at `concurrency`.
    pub fn throughput_at(&self, concurrency: f64) -> f64 {
        usl_throughput([self.lambda, self.sigma, self.kappa], concurrency)
    }

    /// The highest throughput the fitted curve reaches for N ≥ 1: X(N*) with a
    /// peak, else the ceiling λ/σ it approaches (∞ when σ = 0 too).
    pub fn max_throughput(&self) -> f64 {
        match self.peak {
            Some(peak) => peak.throughput,
            None if self.sigma > 0.0 => self.lambda / self.sigma,
            None => f64::INFINITY,
        }
    }
}

/// X(N) for parameters \[λ, σ, κ\].
fn usl_throughput(params: [f64; 3], concurrency: f64) -> f64 {
    let [lambda, sigma, kappa] = params;
    let n = concurrency;
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Fits the USL to `points` = (concurrency Nᵢ ≥ 1, throughput Xᵢ ≥ 0); several
/// points may share a concurrency (one per trial). Start values: λ from the
/// throughput per client at the smallest concurrency, σ and κ from the
/// linearised law λN/X − 1 = σ(N − 1) + κN(N − 1), clipped at 0.
///
/// Errors: no points; a non-finite value; N < 1 or X < 0; every X = 0; fewer
/// than [`MIN_DISTINCT_CONCURRENCIES`] distinct concurrencies; no convergence
/// in [`MAX_ITERATIONS`] iterations.
pub fn fit_usl(points: &[(f64, f64)]) -> Result<UslFit, StatsError> {
    check_points(points)?;
    let distinct = distinct_concurrencies(points);
    if distinct < MIN_DISTINCT_CONCURRENCIES {
        return Err(StatsError::TooFewDistinct {
            what: "distinct concurrencies among the USL points",
            found: distinct,
            needed: MIN_DISTINCT_CONCURRENCIES,
            why: "λ, σ and κ cannot be told apart with fewer; measure more concurrency levels",
        });
    }
    let solution = solve(points, start_values(points))?;
    Ok(summarise(points, &solution))
}

/// Rejects points the law cannot describe, naming the first one at fault.
fn check_points(points: &[(f64, f64)]) -> Result<(), StatsError> {
    if points.is_empty() {
        return Err(StatsError::EmptySample { what: "points" });
    }
    for (index, &(concurrency, throughput)) in points.iter().enumerate() {
        if let Some(value) = [concurrency, throughput]
            .into_iter()
            .find(|v| !v.is_finite())
        {
            let what = "points";
            return Err(StatsError::NonFinite { what, index, value });
        }
        let out_of_range = |what, value, expected| StatsError::ValueOutOfRange {
            what,
            index,
            value,
            expected,
        };
        if concurrency < 1.0 {
            let expected = "the USL needs a concurrency ≥ 1 (it is normalised at one client)";
            return Err(out_of_range("concurrency of point", concurrency, expected));
        }
        if throughput < 0.0 {
            let expected = "a throughput cannot be negative";
            return Err(out_of_range("throughput of point", throughput, expected));
        }
    }
    if points.iter().all(|&(_, throughput)| throughput == 0.0) {
        return Err(StatsError::DegenerateFit {
            model: "USL",
            reason: "every throughput is 0, so no scaling can be read off the points",
        });
    }
    Ok(())
}

fn distinct_concurrencies(points: &[(f64, f64)]) -> usize {
    let mut concurrencies: Vec<f64> = points.iter().map(|p| p.0).collect();
    concurrencies.sort_by(f64::total_cmp);
    concurrencies.dedup();
    concurrencies.len()
}

/// Start values \[λ, σ, κ\] (see [`fit_usl`]).
fn start_values(points: &[(f64, f64)]) -> [f64; 3] {
    let smallest = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let at_smallest: Vec<f64> = points
        .iter()
        .filter(|p| p.0 == smallest)
        .map(|p| p.1 / p.0)
        .collect();
    let mut lambda = at_smallest.iter().sum::<f64>() / at_smallest.len() as f64;
    if lambda.is_nan() || lambda <= 0.0 {
        // Nothing measured at the smallest concurrency: the best per-client rate.
        lambda = points.iter().map(|p| p.1 / p.0).fold(0.0, f64::max);
    }
    // Least squares of y = λN/X − 1 on (N − 1, N(N − 1)), without intercept.
    let (mut matrix, mut rhs) = ([[0.0; 2]; 2], [0.0; 2]);
    for &(n, x) in points.iter().filter(|p| p.1 > 0.0) {
        let regressors = [n - 1.0, n * (n - 1.0)];
        let y = lambda * n / x - 1.0;
        for i in 0..2 {
            rhs[i] += regressors[i] * y;
            for j in 0..2 {
                matrix[i][j] += regressors[i] * regressors[j];
            }
        }
    }
    let [sigma, kappa] = solve_linear(matrix, rhs).unwrap_or([0.0; 2]);
    [lambda, sigma.max(0.0), kappa.max(0.0)]
}

/// Parameters at a minimum, with the cost there and the iterations taken.
struct Solution {
    params: [f64; 3],
    cost: f64,
    iterations: usize,
}

fn cost_of(points: &[(f64, f64)], params: [f64; 3]) -> f64 {
    points
        .iter()
        .map(|&(n, x)| (x - usl_throughput(params, n)).powi(2))
        .sum()
}

/// [`least_squares`] on throughputs divided by the largest one, so squares
/// and sums stay far from overflow whatever the unit; λ and the sum are
/// scaled back. The points hold some throughput > 0.
fn solve(points: &[(f64, f64)], start: [f64; 3]) -> Result<Solution, StatsError> {
    let unit = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let scaled: Vec<(f64, f64)> = points.iter().map(|&(n, x)| (n, x / unit)).collect();
    let [lambda, sigma, kappa] = start;
    let mut solution = least_squares(&scaled, [lambda / unit, sigma, kappa])?;
    solution.params[0] *= unit;
    solution.cost *= unit * unit;
    let finite = solution.params.iter().all(|v| v.is_finite()) && solution.cost.is_finite();
    // λ = 0 only survives where the gradient overflowed and no step could be taken.
    if !finite || solution.params[0] <= 0.0 {
        return Err(StatsError::DegenerateFit {
            model: "USL",
            reason: "its numbers overflow double precision; rescale the concurrencies or throughputs",
        });
    }
    Ok(solution)
}

/// Projected Levenberg–Marquardt from `start` (see the module documentation).
fn least_squares(points: &[(f64, f64)], start: [f64; 3]) -> Result<Solution, StatsError> {
    let mut params = start;
    let mut cost = cost_of(points, params);
    let mut damping = INITIAL_DAMPING;
    for iteration in 0..MAX_ITERATIONS {
        let system = NormalEquations::at(points, params);
        let free = system.free_parameters(params);
        let done = |params, cost| {
            Ok(Solution {
                params,
                cost,
                iterations: iteration,
            })
        };
        if cost.is_nan() || cost <= 0.0 || system.is_stationary(free, cost) {
            return done(params, cost);
        }
        let Some((next, next_cost)) =
            damped_step(points, params, cost, &system, free, &mut damping)
        else {
            // No step, however short, lowers the cost: a minimum to working precision.
            return done(params, cost);
        };
        let negligible = cost - next_cost <= COST_TOLERANCE * cost;
        (params, cost) = (next, next_cost);
        if negligible {
            return Ok(Solution {
                params,
                cost,
                iterations: iteration + 1,
            });
        }
    }
    Err(StatsError::NoConvergence {
        model: "USL",
        iterations: MAX_ITERATIONS,
        hint: "the points may not follow the law; when the best fit wants λ, σ and κ ever \
               larger, the points say nothing about low concurrency: measure from N = 1",
    })
}

/// JᵀJ and Jᵀr of the residuals r = X − X(N) at some parameters.
struct NormalEquations {
    jtj: [[f64; 3]; 3],
    jtr: [f64; 3],
}

impl NormalEquations {
    fn at(points: &[(f64, f64)], params: [f64; 3]) -> Self {
        let [lambda, sigma, kappa] = params;
        let mut system = Self {
            jtj: [[0.0; 3]; 3],
            jtr: [0.0; 3],
        };
        for &(n, x) in points {
            let denominator = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0);
            let d_lambda = n / denominator;
            let d_sigma = -lambda * n * (n - 1.0) / (denominator * denominator);
            let gradient = [d_lambda, d_sigma, d_sigma * n];
            let residual = x - lambda * d_lambda;
            for i in 0..3 {
                system.jtr[i] += gradient[i] * residual;
                for j in 0..3 {
                    system.jtj[i][j] += gradient[i] * gradient[j];
                }
            }
        }
        system
    }

    /// A parameter moves if it has any effect and is inside its bound or
    /// pulled into it (Jᵀr > 0 raises it); one at 0 pushed below stays put.
    fn free_parameters(&self, params: [f64; 3]) -> [bool; 3] {
        std::array::from_fn(|j| self.jtj[j][j] > 0.0 && (params[j] > 0.0 || self.jtr[j] > 0.0))
    }

    /// The decrease of the cost the linearised model predicts for a move from
    /// `params` to `next`: 2δᵀJᵀr − δᵀJᵀJδ.
    fn predicted_decrease(&self, params: [f64; 3], next: [f64; 3]) -> f64 {
        let step: [f64; 3] = std::array::from_fn(|j| next[j] - params[j]);
        let mut decrease = 0.0;
        for i in 0..3 {
            decrease += 2.0 * step[i] * self.jtr[i];
            for j in 0..3 {
                decrease -= step[i] * self.jtj[i][j] * step[j];
            }
        }
        decrease
    }

    fn is_stationary(&self, free: [bool; 3], cost: f64) -> bool {
        (0..3)
            .filter(|&j| free[j])
            .all(|j| self.jtr[j].abs() <= GRADIENT_TOLERANCE * (self.jtj[j][j] * cost).sqrt())
    }
}

/// The first step, raising the damping as needed, that lowers the cost:
/// (JᵀJ + μ·diag(JᵀJ))·δ = Jᵀr over the free parameters, clipped at 0.
/// `None` when even the most damped step does not lower it.
fn damped_step(
    points: &[(f64, f64)],
    params: [f64; 3],
    cost: f64,
    system: &NormalEquations,
    free: [bool; 3],
    damping: &mut f64,
) -> Option<([f64; 3], f64)> {
    // Scale to a unit diagonal so the solve does not see λ's and κ's sizes.
    let scale: [f64; 3] = std::array::from_fn(|j| {
        if free[j] {
            1.0 / system.jtj[j][j].sqrt()
        } else {
            0.0
        }
    });
    let rhs: [f64; 3] = std::array::from_fn(|j| system.jtr[j] * scale[j]);
    let mut growth = 2.0;
    while *damping <= MAX_DAMPING {
        let matrix = damped_matrix(system, free, scale, *damping);
        if let Some(scaled) = solve_linear(matrix, rhs) {
            let next: [f64; 3] =
                std::array::from_fn(|j| (params[j] + scaled[j] * scale[j]).max(0.0));
            let next_cost = cost_of(points, next);
            if next_cost < cost {
                let gain = (cost - next_cost) / system.predicted_decrease(params, next);
                *damping = (*damping * damping_factor(gain)).max(MIN_DAMPING);
                return Some((next, next_cost));
            }
        }
        *damping *= growth;
        growth *= 2.0;
    }
    None
}

/// Nielsen's damping update from the gain ratio, actual over predicted
/// decrease: a step that did what the linear model promised (gain near 1)
/// lowers the damping up to threefold, one that fell short raises it up to
/// twofold. Without it, large residuals (a poor fit) make the undamped steps
/// overshoot back and forth and crawl for thousands of iterations.
fn damping_factor(gain: f64) -> f64 {
    if gain.is_finite() {
        (1.0 / 3.0_f64).max(1.0 - (2.0 * gain - 1.0).powi(3))
    } else {
        2.0
    }
}

/// The scaled, damped JᵀJ; a held parameter gets a unit row and column, so
/// its step solves to 0.
fn damped_matrix(
    system: &NormalEquations,
    free: [bool; 3],
    scale: [f64; 3],
    damping: f64,
) -> [[f64; 3]; 3] {
    let mut matrix = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            matrix[i][j] = if free[i] && free[j] {
                system.jtj[i][j] * scale[i] * scale[j]
            } else {
                0.0
            };
        }
        matrix[i][i] = if free[i] {
            matrix[i][i] * (1.0 + damping)
        } else {
            1.0
        };
    }
    matrix
}

/// The public summary of a solution: parameters, peak and fit quality.
fn summarise(points: &[(f64, f64)], solution: &Solution) -> UslFit {
    let [lambda, sigma, kappa] = solution.params;
    let max_concurrency = points.iter().map(|p| p.0).fold(1.0, f64::max);
    UslFit {
        lambda,
        sigma,
        kappa,
        peak: peak_of(solution.params, max_concurrency),
        residual_sum_of_squares: solution.cost,
        iterations: solution.iterations,
        points: points.len(),
        max_concurrency,
    }
}

/// Whether κ is 0 as far as the measured range can tell (see [`KAPPA_ZERO_SHARE`]).
fn kappa_is_zero(params: [f64; 3], max_concurrency: f64) -> bool {
    let [_, sigma, kappa] = params;
    let n = max_concurrency;
    kappa * n * (n - 1.0) <= KAPPA_ZERO_SHARE * (1.0 + sigma * (n - 1.0))
}

fn peak_of(params: [f64; 3], max_concurrency: f64) -> Option<UslPeak> {
    if kappa_is_zero(params, max_concurrency) {
        return None;
    }
    let [_, sigma, kappa] = params;
    // dX/dN has the sign of 1 − σ − κN², so the peak is at N² = (1 − σ)/κ.
    let concurrency = ((1.0 - sigma).max(0.0) / kappa).sqrt().max(1.0);
    Some(UslPeak {
        concurrency,
        throughput: usl_throughput(params, concurrency),
        within_measured_range: concurrency <= max_concurrency,
    })
}

/// Percentile-bootstrap intervals for a USL fit's parameters and peak.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UslBootstrap {
    /// The fit to all points.
    pub fit: UslFit,
    /// Interval for λ.
    pub lambda: Interval,
    /// Interval for σ.
    pub sigma: Interval,
    /// Interval for κ.
    pub kappa: Interval,
    /// Interval for N*; a resample without a peak counts as N* = ∞.
    pub peak_concurrency: Interval,
    /// Interval for the highest throughput of the curve ([`UslFit::max_throughput`]).
    pub peak_throughput: Interval,
    /// The κ interval reaches 0: the data are consistent with no retrograde
    /// region in the measured range, and N* has no finite upper bound.
    pub kappa_indistinguishable_from_zero: bool,
    /// The requested confidence.
    pub confidence: f64,
    /// Resamples drawn.
    pub resamples: usize,
    /// Resamples left out because they could not be fitted (fewer than
    /// [`MIN_DISTINCT_CONCURRENCIES`] distinct concurrencies drawn, or no convergence).
    pub unfitted_resamples: usize,
}

/// Fits the USL to `points` and to `resamples` resamples of them (drawn with
/// replacement, seeded by `seed`, each fit started from the full fit), and
/// reads percentile intervals at `confidence` off the resampled fits.
///
/// Errors: those of [`fit_usl`]; a confidence outside (0, 1]; fewer than
/// [`crate::bootstrap::MIN_RESAMPLES`] resamples; fewer than half the
/// resamples fitted ([`StatsError::TooFewFittedResamples`]: typically one
/// point per concurrency at only three concurrencies).
pub fn bootstrap_usl(
    points: &[(f64, f64)],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Result<UslBootstrap, StatsError> {
    let fit = fit_usl(points)?;
    check_confidence(confidence)?;
    check_resamples(resamples)?;
    let start = [fit.lambda, fit.sigma, fit.kappa];
    let mut rng = SplitMix64::new(seed);
    let mut resample = points.to_vec();
    let mut fitted: Vec<[f64; 5]> = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in resample.iter_mut() {
            *slot = points[rng.below(points.len())];
        }
        fitted.extend(refit(&resample, start, fit.max_concurrency));
    }
    if fitted.len() * 2 < resamples {
        let fitted = fitted.len();
        return Err(StatsError::TooFewFittedResamples { fitted, resamples });
    }
    let interval = |column: usize| {
        let estimates = fitted.iter().map(|row| row[column]).collect();
        percentile_interval(estimates, confidence)
    };
    let kappa = interval(2);
    let no_retrograde = kappa_is_zero([fit.lambda, fit.sigma, kappa.lo], fit.max_concurrency);
    let mut peak_concurrency = interval(3);
    if no_retrograde {
        peak_concurrency.hi = f64::INFINITY;
    }
    Ok(UslBootstrap {
        fit,
        lambda: interval(0),
        sigma: interval(1),
        kappa,
        peak_concurrency,
        peak_throughput: interval(4),
        kappa_indistinguishable_from_zero: no_retrograde,
        confidence,
        resamples,
        unfitted_resamples: resamples - fitted.len(),
    })
}

/// λ, σ, κ, N* (∞ without a peak) and the curve's highest throughput for one
/// resample, judged against the full data's largest concurrency; `None` when
/// the resample cannot be fitted.
fn refit(resample: &[(f64, f64)], start: [f64; 3], max_concurrency: f64) -> Option<[f64; 5]> {
    let fittable = distinct_concurrencies(resample) >= MIN_DISTINCT_CONCURRENCIES
        && resample.iter().any(|p| p.1 > 0.0);
    if !fittable {
        return None;
    }
    let mut fit = summarise(resample, &solve(resample, start).ok()?);
    fit.peak = peak_of([fit.lambda, fit.sigma, fit.kappa], max_concurrency);
    let peak_concurrency = fit.peak.map_or(f64::INFINITY, |peak| peak.concurrency);
    Some([
        fit.lambda,
        fit.sigma,
        fit.kappa,
        peak_concurrency,
        fit.max_throughput(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(params: [f64; 3], concurrencies: &[f64]) -> Vec<(f64, f64)> {
        concurrencies
            .iter()
            .map(|&n| (n, usl_throughput(params, n)))
            .collect()
    }

    /// Multiplicative noise of ±`spread` from a fixed pattern, so tests need no generator.
    fn noisy(points: &[(f64, f64)], spread: f64) -> Vec<(f64, f64)> {
        let pattern = [0.3, -0.8, 0.9, -0.2, 0.5, -0.6, 0.1, -0.9, 0.7, -0.4];
        let factor = |i: usize| 1.0 + spread * pattern[i % pattern.len()];
        points
            .iter()
            .enumerate()
            .map(|(i, &(n, x))| (n, x * factor(i)))
            .collect()
    }

    const LEVELS: [f64; 7] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

    #[test]
    fn exact_curve_is_recovered() {
        let truth = [1000.0, 0.05, 0.0005];
        let fit = fit_usl(&curve(truth, &LEVELS)).unwrap();
        for (got, want) in [fit.lambda, fit.sigma, fit.kappa].iter().zip(truth) {
            assert!((got - want).abs() <= 1e-7 * want, "{fit:?}");
        }
        let peak = fit.peak.unwrap();
        assert!(
            (peak.concurrency - (0.95f64 / 0.0005).sqrt()).abs() < 1e-4,
            "{peak:?}"
        );
        assert!(peak.within_measured_range);
    }

    #[test]
    fn linear_scaling_puts_sigma_and_kappa_on_their_bound() {
        let fit = fit_usl(&curve([500.0, 0.0, 0.0], &LEVELS)).unwrap();
        assert!((fit.lambda - 500.0).abs() < 1e-9, "{fit:?}");
        assert_eq!((fit.sigma, fit.kappa, fit.peak), (0.0, 0.0, None));
        assert_eq!(fit.max_throughput(), f64::INFINITY);
    }

    #[test]
    fn contention_alone_levels_off_without_a_peak() {
        let fit = fit_usl(&curve([800.0, 0.1, 0.0], &LEVELS)).unwrap();
        assert_eq!((fit.kappa, fit.peak), (0.0, None), "{fit:?}");
        assert!((fit.max_throughput() - 8000.0).abs() < 1e-3);
    }

    #[test]
    fn too_few_concurrencies_say_why() {
        let err = fit_usl(&[(1.0, 10.0), (1.0, 11.0), (4.0, 30.0)]).unwrap_err();
        assert!(matches!(
            err,
            StatsError::TooFewDistinct {
                found: 2,
                needed: 3,
                ..
            }
        ));
        assert!(err.to_string().contains("measure more concurrency levels"));
    }

    #[test]
    fn a_best_fit_at_infinity_is_reported_not_returned() {
        // Falling throughput far from N = 1: the closer λ, σ and κ get to
        // infinity together, the better the curve fits, so there is no minimum.
        let points = [(66.0, 972_574.77), (101.0, 940_106.06), (185.0, 876_797.59)];
        let err = fit_usl(&points).unwrap_err();
        assert!(
            matches!(err, StatsError::NoConvergence { model: "USL", .. }),
            "{err}"
        );
        assert!(err.to_string().contains("measure from N = 1"));
    }

    #[test]
    fn bad_points_are_named() {
        assert!(matches!(
            fit_usl(&[(0.5, 1.0)]),
            Err(StatsError::ValueOutOfRange { index: 0, .. })
        ));
        assert!(matches!(
            fit_usl(&[(1.0, 1.0), (2.0, -1.0)]),
            Err(StatsError::ValueOutOfRange { index: 1, .. })
        ));
        assert!(matches!(
            fit_usl(&[(1.0, f64::NAN)]),
            Err(StatsError::NonFinite { index: 0, .. })
        ));
        assert!(matches!(
            fit_usl(&[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0)]),
            Err(StatsError::DegenerateFit { .. })
        ));
        assert_eq!(
            fit_usl(&[]),
            Err(StatsError::EmptySample { what: "points" })
        );
    }

    #[test]
    fn bootstrap_brackets_a_clear_peak() {
        let trials: Vec<f64> = LEVELS.iter().flat_map(|&n| [n; 3]).collect();
        let points = noisy(&curve([1000.0, 0.05, 0.002], &trials), 0.03);
        let boot = bootstrap_usl(&points, 0.95, 500, 11).unwrap();
        assert!(!boot.kappa_indistinguishable_from_zero, "{boot:?}");
        assert!(
            boot.peak_concurrency.contains((0.95f64 / 0.002).sqrt()),
            "{boot:?}"
        );
        assert!(boot.peak_concurrency.hi.is_finite());
        assert_eq!(boot, bootstrap_usl(&points, 0.95, 500, 11).unwrap());
    }

    #[test]
    fn bootstrap_of_linear_data_finds_no_retrograde_region() {
        let trials: Vec<f64> = LEVELS[..5].iter().flat_map(|&n| [n; 3]).collect();
        let points = noisy(&curve([700.0, 0.0, 0.0], &trials), 0.02);
        let boot = bootstrap_usl(&points, 0.95, 500, 3).unwrap();
        assert!(boot.kappa_indistinguishable_from_zero, "{boot:?}");
        assert_eq!(boot.kappa.lo, 0.0);
        assert_eq!(boot.peak_concurrency.hi, f64::INFINITY);
    }
}
