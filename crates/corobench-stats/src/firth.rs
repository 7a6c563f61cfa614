//! Logistic regression of pass counts on one covariate with Firth's penalty.
//!
//! Plain maximum likelihood has no answer when the outcomes are completely
//! separated (every trial below some rate passes, every one above fails): the
//! likelihood keeps growing as the slope goes to −∞. That is a common outcome
//! of a capacity search with a few trials per rate, so the fit maximises
//! Firth's penalised log-likelihood ℓ(β) + ½·ln det I(β) instead, I being the
//! Fisher information. The penalty (the Jeffreys prior) keeps the estimates
//! finite in every case, removes the O(1/n) bias of the maximum-likelihood
//! estimate, and barely moves it when the data overlap. It is invariant under
//! a change of the covariate's origin and scale, so the fit works on a
//! standardised covariate without changing the answer.
//!
//! Iteration (as R's `logistf`): β ← β + I⁻¹U*, with Firth's modified score
//! U* = Σ (yᵢ − nᵢpᵢ + hᵢ(½ − pᵢ))·xᵢ, hᵢ the leverages, halving the step
//! until the penalised log-likelihood does not fall.

/// Trials at one covariate value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Group {
    /// The (standardised) covariate.
    pub x: f64,
    /// Trials that passed.
    pub passed: f64,
    /// Trials run.
    pub trials: f64,
}

/// Newton iterations before the fit gives up.
pub(crate) const MAX_ITERATIONS: usize = 200;

/// Stop once no coefficient moves by more than this (the covariate is
/// standardised, so coefficients are of order 1 to 100).
const STEP_TOLERANCE: f64 = 1e-11;

/// Step halvings tried before an iteration counts as stuck.
const MAX_HALVINGS: usize = 60;

/// The longest step taken at once; keeps the first steps from overshooting
/// into a region where every fitted probability is 0 or 1.
const MAX_STEP: f64 = 10.0;

/// Intercept and slope maximising the penalised log-likelihood, and the
/// iterations taken; `None` if the information matrix is singular (fewer
/// than two covariate values with trials) or the iteration does not converge.
pub(crate) fn fit(groups: &[Group]) -> Option<([f64; 2], usize)> {
    let mut beta = [0.0; 2];
    let mut current = penalised_log_likelihood(groups, beta)?;
    for iteration in 1..=MAX_ITERATIONS {
        let mut step = scoring_step(groups, beta)?;
        let longest = step[0].abs().max(step[1].abs());
        if longest <= STEP_TOLERANCE {
            return Some(([beta[0] + step[0], beta[1] + step[1]], iteration));
        }
        if longest > MAX_STEP {
            step = step.map(|s| s * MAX_STEP / longest);
        }
        let (next, value) = halved_until_no_worse(groups, beta, step, current)?;
        let moved = (next[0] - beta[0]).abs().max((next[1] - beta[1]).abs());
        (beta, current) = (next, value);
        if moved <= STEP_TOLERANCE {
            return Some((beta, iteration));
        }
    }
    None
}

/// β + step/2ᵏ for the smallest k at which the penalised log-likelihood is not
/// lower than `current` (allowing for rounding at the optimum).
fn halved_until_no_worse(
    groups: &[Group],
    beta: [f64; 2],
    mut step: [f64; 2],
    current: f64,
) -> Option<([f64; 2], f64)> {
    let slack = 1e-13 * current.abs().max(1.0);
    for _ in 0..MAX_HALVINGS {
        let candidate = [beta[0] + step[0], beta[1] + step[1]];
        if let Some(value) = penalised_log_likelihood(groups, candidate) {
            if value >= current - slack {
                return Some((candidate, value));
            }
        }
        step = step.map(|s| s / 2.0);
    }
    None
}

/// The fitted probability, its weight p(1 − p) and the linear predictor of a group.
fn predicted(group: &Group, beta: [f64; 2]) -> (f64, f64, f64) {
    let eta = beta[0] + beta[1] * group.x;
    let p = 1.0 / (1.0 + (-eta).exp());
    (p, p * (1.0 - p), eta)
}

/// The Fisher information Σ nᵢwᵢxᵢxᵢᵀ with xᵢ = (1, x) and its inverse;
/// `None` when it is singular.
fn information(groups: &[Group], beta: [f64; 2]) -> Option<([[f64; 2]; 2], f64)> {
    let mut info = [[0.0; 2]; 2];
    for group in groups {
        let (_, weight, _) = predicted(group, beta);
        let w = group.trials * weight;
        info[0][0] += w;
        info[0][1] += w * group.x;
        info[1][1] += w * group.x * group.x;
    }
    let det = info[0][0] * info[1][1] - info[0][1] * info[0][1];
    // Relative to the diagonal: below this the two columns are one.
    let independent = det > 1e-14 * info[0][0] * info[1][1];
    if !independent {
        return None;
    }
    let inverse = [
        [info[1][1] / det, -info[0][1] / det],
        [-info[0][1] / det, info[0][0] / det],
    ];
    Some((inverse, det))
}

/// I⁻¹U*, the Fisher-scoring step on the penalised log-likelihood.
fn scoring_step(groups: &[Group], beta: [f64; 2]) -> Option<[f64; 2]> {
    let (inverse, _) = information(groups, beta)?;
    let mut score = [0.0; 2];
    for group in groups {
        let (p, weight, _) = predicted(group, beta);
        let x = group.x;
        let quadratic = inverse[0][0] + 2.0 * x * inverse[0][1] + x * x * inverse[1][1];
        let leverage = group.trials * weight * quadratic;
        let residual = group.passed - group.trials * p + leverage * (0.5 - p);
        score[0] += residual;
        score[1] += residual * x;
    }
    Some([
        inverse[0][0] * score[0] + inverse[0][1] * score[1],
        inverse[1][0] * score[0] + inverse[1][1] * score[1],
    ])
}

/// ℓ(β) + ½·ln det I(β), with ln p and ln(1 − p) computed without
/// cancellation; `None` where I is singular (the penalty is −∞ there).
pub(crate) fn penalised_log_likelihood(groups: &[Group], beta: [f64; 2]) -> Option<f64> {
    let (_, det) = information(groups, beta)?;
    let log_likelihood: f64 = groups
        .iter()
        .map(|group| {
            let (_, _, eta) = predicted(group, beta);
            // ln p = −softplus(−η), ln(1 − p) = −softplus(η).
            -group.passed * softplus(-eta) - (group.trials - group.passed) * softplus(eta)
        })
        .sum();
    Some(log_likelihood + 0.5 * det.ln())
}

/// ln(1 + eᵗ) without overflow.
fn softplus(t: f64) -> f64 {
    t.max(0.0) + (-t.abs()).exp().ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Groups of `trials` trials each at (x, passed).
    fn groups(rows: &[(f64, f64)], trials: f64) -> Vec<Group> {
        rows.iter()
            .map(|&(x, passed)| Group { x, passed, trials })
            .collect()
    }

    #[test]
    fn complete_separation_still_gives_a_finite_fit() {
        let data = groups(&[(-1.0, 3.0), (-0.3, 3.0), (0.3, 0.0), (1.0, 0.0)], 3.0);
        let ([intercept, slope], _) = fit(&data).unwrap();
        assert!(slope < 0.0 && slope.is_finite(), "{slope}");
        // Symmetric data: the boundary is at x = 0.
        assert!(intercept.abs() < 1e-9, "{intercept}");
    }

    #[test]
    fn the_fit_is_a_stationary_point_of_the_penalised_likelihood() {
        let data = groups(&[(-1.0, 4.0), (-0.5, 3.0), (0.0, 2.0), (1.0, 1.0)], 4.0);
        let (beta, _) = fit(&data).unwrap();
        let at = |b| penalised_log_likelihood(&data, b).unwrap();
        for delta in [[1e-4, 0.0], [0.0, 1e-4], [-1e-4, 0.0], [0.0, -1e-4]] {
            assert!(at(beta) >= at([beta[0] + delta[0], beta[1] + delta[1]]));
        }
    }

    #[test]
    fn one_covariate_value_cannot_be_fitted() {
        assert!(fit(&groups(&[(0.5, 1.0)], 3.0)).is_none());
    }

    #[test]
    fn softplus_is_stable_at_the_extremes() {
        assert_eq!(softplus(-800.0), 0.0);
        assert_eq!(softplus(800.0), 800.0);
        assert!((softplus(0.0) - 2f64.ln()).abs() < 1e-15);
    }
}
