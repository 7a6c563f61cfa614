#!/usr/bin/env python3
"""Reference values for corobench-stats' model fits, computed with numpy, scipy
and statsmodels.

Writes JSON fixtures that crates/corobench-stats/tests/model_fixtures.rs reads:

  usl.json       Universal Scalability Law fits by scipy.optimize.curve_fit
                 (bounds >= 0, trust-region reflective), started from a grid
                 of points; the best fit is kept and checked to be the one
                 every converged start agrees on
  ratio.json     Hodges-Lehmann ratios and Moses intervals by brute force:
                 every pairwise log difference, and the Mann-Whitney critical
                 rank from a full enumeration of splits (small samples),
                 scipy's exact U distribution (up to 50 a side) or the normal
                 approximation (beyond)

Kept apart from stats_fixtures.py so regenerating these does not rewrite the
older fixtures. Every sample comes from a seeded generator, so a rerun with
the same library versions writes the same files.
Usage: python3 scripts/model_fixtures.py [--out DIR]   (needs numpy, scipy, statsmodels)
"""

import itertools
import math

import numpy as np
import scipy
import statsmodels
from scipy import optimize, stats

from stats_fixtures import output_directory, write_fixtures

SEED = 20250307
# corobench-stats' limit for the exact U distribution (utest::EXACT_LIMIT).
EXACT_LIMIT = 50
# Splits are enumerated one by one up to this many.
ENUMERATION_LIMIT = 20_000


# ---------------------------------------------------------------- USL

def usl(n, lam, sigma, kappa):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def usl_points(rng, lam, sigma, kappa, levels, trials, noise):
    n = np.repeat(np.asarray(levels, dtype=float), trials)
    x = usl(n, lam, sigma, kappa) * rng.lognormal(0.0, noise, n.size)
    return n, np.round(x, 3)


def best_usl_fit(n, x):
    """curve_fit from a grid of starts; the lowest residual sum of squares wins,
    and every start that converged must agree on it (one minimum, not a local one)."""
    lam0 = float(np.mean(x[n == n.min()] / n.min()))
    fits = []
    for scale in (0.5, 1.0, 2.0):
        for sigma0 in (0.0, 0.01, 0.1, 0.5):
            for kappa0 in (0.0, 1e-5, 1e-3, 1e-1):
                p0 = [lam0 * scale, sigma0 + 1e-9, kappa0 + 1e-12]
                try:
                    params, _ = optimize.curve_fit(
                        usl, n, x, p0=p0, bounds=(0, np.inf), method="trf",
                        ftol=1e-15, xtol=1e-15, gtol=1e-15, max_nfev=20_000)
                except RuntimeError:
                    continue
                sse = float(np.sum((x - usl(n, *params)) ** 2))
                fits.append((sse, [float(v) for v in params]))
    fits.sort(key=lambda f: f[0])
    best_sse, best = fits[0]
    agreeing = [f for f in fits if f[0] <= best_sse * (1 + 1e-9) + 1e-12]
    assert len(agreeing) >= len(fits) // 2, (best_sse, fits[:5])
    return polish_interior(n, x, best, best_sse)


def polish_interior(n, x, params, sse):
    """trf stops with the relative change of the sum near 1e-15 but the
    parameters still ~1e-7 off. Where no parameter is on its bound, MINPACK's
    unconstrained Levenberg-Marquardt from there converges quadratically; its
    answer is kept if it stays inside the bounds and fits no worse."""
    if min(params) <= 1e-12 * params[0]:
        return params, sse
    polished, _ = optimize.curve_fit(usl, n, x, p0=params, method="lm",
                                     ftol=1e-15, xtol=1e-15, gtol=1e-15, maxfev=20_000)
    polished_sse = float(np.sum((x - usl(n, *polished)) ** 2))
    if min(polished) < 0 or polished_sse > sse:
        return params, sse
    return [float(v) for v in polished], polished_sse


def usl_cases(rng):
    specs = [
        ("contention_and_crosstalk", 1000.0, 0.05, 5e-4, [1, 2, 4, 8, 16, 32, 64], 3, 0.03),
        ("retrograde", 500.0, 0.02, 2e-3, [1, 2, 4, 8, 16, 24, 32, 48, 64, 96], 2, 0.04),
        ("linear", 950.0, 0.0, 0.0, [1, 2, 3, 4, 5, 6, 7, 8], 3, 0.02),
        ("contention_only", 800.0, 0.08, 0.0, [1, 2, 4, 8, 16, 32], 3, 0.02),
        ("one_trial_per_level", 2000.0, 0.1, 1e-4, [1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64], 1, 0.05),
        ("three_levels", 300.0, 0.1, 0.01, [1, 4, 16], 2, 0.03),
    ]
    cases = []
    for name, lam, sigma, kappa, levels, trials, noise in specs:
        n, x = usl_points(rng, lam, sigma, kappa, levels, trials, noise)
        (fit_lam, fit_sigma, fit_kappa), sse = best_usl_fit(n, x)
        cases.append({
            "name": name,
            "points": [[float(a), float(b)] for a, b in zip(n, x)],
            "truth": {"lambda": lam, "sigma": sigma, "kappa": kappa},
            "lambda": fit_lam, "sigma": fit_sigma, "kappa": fit_kappa,
            "residual_sum_of_squares": sse,
        })
    return cases


# ---------------------------------------------------------------- retired draws

def retired_capacity_draws(rng):
    """The logistic capacity fixture is gone with its estimator, but its eight
    binomial draws stay, so ratio.json regenerates to the same values."""
    rates = [750 * f for f in (0.5, 0.65, 0.8, 0.9, 1.0, 1.15, 1.3, 1.6)]
    rng.binomial(4, [1 / (1 + (r / 750) ** 6) for r in rates])


# ---------------------------------------------------------------- ratio

def u_cdf_by_enumeration(n_a, n_b):
    """P(U <= u) for u = 0..n_a*n_b, by trying every split of n_a + n_b distinct values."""
    counts = np.zeros(n_a * n_b + 1)
    for members in itertools.combinations(range(n_a + n_b), n_a):
        # U of the first sample: pairs (a, b) with a above b; value i has i values below it.
        counts[sum(members) - n_a * (n_a - 1) // 2] += 1
    return np.cumsum(counts) / counts.sum()


def u_cdf_by_scipy(n_a, n_b, u):
    """P(U_a <= u) from scipy's exact distribution: samples built to have U_a = u."""
    b = np.arange(n_b, dtype=float)
    below, remaining = [], u
    for _ in range(n_a):
        below.append(min(n_b, remaining))
        remaining -= below[-1]
    a = np.array([c - 0.5 for c in below]) + np.arange(n_a) * 1e-6
    result = stats.mannwhitneyu(a, b, alternative="less", method="exact")
    assert result.statistic == u
    return float(result.pvalue)


def moses_rank(n_a, n_b, confidence):
    tail = (1 - confidence) / 2
    m = n_a * n_b
    if n_a <= EXACT_LIMIT and n_b <= EXACT_LIMIT:
        if math.comb(n_a + n_b, n_a) <= ENUMERATION_LIMIT:
            cdf, method = u_cdf_by_enumeration(n_a, n_b), "exact_enumeration"
            cdf_at = lambda u: float(cdf[u])
        else:
            cdf_at, method = (lambda u: u_cdf_by_scipy(n_a, n_b, u)), "exact_scipy"
        # rank = how many u have P(U <= u) <= tail; the cdf rises, so bisect.
        low, high = 0, m // 2 + 1
        while low < high:
            middle = (low + high) // 2
            low, high = (middle + 1, high) if cdf_at(middle) <= tail else (low, middle)
        rank = low
        achieved = 1 - 2 * cdf_at(rank - 1) if rank else None
        return rank, achieved, method
    mean, sd = m / 2, math.sqrt(m * (n_a + n_b + 1) / 12)
    rank = max(0, min(m // 2, math.floor(mean + 0.5 + sd * stats.norm.ppf(tail))))
    achieved = 1 - 2 * float(stats.norm.cdf((rank - 0.5 - mean) / sd)) if rank else None
    return rank, achieved, "normal_approximation"


def ratio_case(rng, n_a, n_b, factor, confidence):
    b = np.round(1000 * rng.lognormal(0.0, 0.05, n_b), 2)
    a = np.round(1000 * factor * rng.lognormal(0.0, 0.05, n_a), 2)
    differences = np.sort(np.subtract.outer(np.log(a), np.log(b)).ravel())
    rank, achieved, method = moses_rank(n_a, n_b, confidence)
    case = {"a": a.tolist(), "b": b.tolist(), "confidence": confidence,
            "estimate": float(np.exp(np.median(differences))), "rank": rank, "method": method}
    if rank:
        case.update(lo=float(np.exp(differences[rank - 1])),
                    hi=float(np.exp(differences[-rank])), achieved=achieved)
    return case


def ratio_cases(rng):
    sizes = [(2, 2), (3, 3), (3, 5), (4, 4), (5, 5), (6, 6), (4, 7), (7, 7), (8, 8), (8, 6),
             (12, 10), (20, 20), (30, 25), (50, 50), (51, 51), (60, 55), (80, 80)]
    cases = [ratio_case(rng, n_a, n_b, (3.06, 1.0, 0.8)[i % 3], 0.95)
             for i, (n_a, n_b) in enumerate(sizes)]
    cases += [ratio_case(rng, n_a, n_b, 2.0, c)
              for (n_a, n_b) in [(5, 5), (6, 6), (10, 9)] for c in (0.8, 0.9, 0.99)]
    return cases


def main():
    out = output_directory(__doc__)
    rng = np.random.default_rng(SEED)
    versions = {"numpy": np.__version__, "scipy": scipy.__version__,
                "statsmodels": statsmodels.__version__, "seed": SEED}
    files = {
        "usl.json": usl_cases(rng),
    }
    retired_capacity_draws(rng)
    files["ratio.json"] = ratio_cases(rng)
    write_fixtures(out, versions, files)


if __name__ == "__main__":
    main()
