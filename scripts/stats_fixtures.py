#!/usr/bin/env python3
"""Reference values for corobench-stats, computed with numpy and scipy.

Writes JSON fixtures that crates/corobench-stats/tests/scipy_fixtures.rs reads:

  quantiles.json   numpy.quantile(method="median_unbiased") (Hyndman-Fan R8),
                   plus min, max, mean and scipy.stats.gmean of each sample
  median_ci.json   order-statistic confidence intervals built from
                   scipy.stats.binom (n <= 30) and scipy.stats.norm (n > 30)
  utest.json       two-sided Mann-Whitney U p-values: scipy exact (no ties),
                   scipy asymptotic with continuity correction, and, for small
                   tied samples, a full enumeration of every split (checked
                   against scipy's exact permutation distribution)
  special.json     scipy.special.erfc and scipy.stats.norm.ppf

Every sample comes from a seeded generator, so a rerun writes the same files.
Usage: python3 scripts/stats_fixtures.py [--out DIR]   (needs numpy, scipy)
"""

import argparse
import itertools
import json
import math
import pathlib

import numpy as np
import scipy
from scipy import special, stats

SEED = 20240611
DEFAULT_OUT = pathlib.Path(__file__).resolve().parent.parent / (
    "crates/corobench-stats/tests/fixtures"
)
QUANTILE_LEVELS = [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0]
CONFIDENCES = [0.5, 0.8, 0.9, 0.95, 0.99]
# go-moremath's limits (stats/utest.go, stats/quantileci.go).
EXACT_LIMIT, TIES_EXACT_LIMIT, CI_APPROX_THRESHOLD = 50, 25, 30


def quantile_cases(rng):
    cases = []
    for n in list(range(1, 13)) + [17, 30, 31, 60]:
        values = [round(float(v), 6) for v in rng.lognormal(3.0, 0.5, n)]
        if n % 4 == 0:  # some samples with repeated values
            values[1:3] = [values[0], values[0]]
        cases.append({
            "values": values,
            "quantiles": [[q, float(np.quantile(values, q, method="median_unbiased"))]
                          for q in QUANTILE_LEVELS],
            "min": float(np.min(values)),
            "max": float(np.max(values)),
            "mean": float(np.mean(values)),
            "geometric_mean": float(stats.gmean(values)),
        })
    return cases


def greedy_binomial(n, q, confidence):
    """Grow [l, r) from the mode, larger neighbour first, ties to the left.
    Also returns the last step if it was a tie (benchstat may break it right)."""
    pmf = lambda k: float(stats.binom.pmf(k, n, q)) if 0 <= k <= n else 0.0
    mode = math.ceil((n + 1) * q) - 1
    l, r, mass, last_step_tied = mode, mode + 1, pmf(mode), False
    while mass < confidence and (pmf(l - 1) > 0 or pmf(r) > 0):
        left, right = pmf(l - 1), pmf(r)
        # scipy's pmf(k) and pmf(n - k) can differ in the last bit at q = 0.5.
        last_step_tied = math.isclose(left, right, rel_tol=1e-12)
        if left >= right or last_step_tied:
            mass, l = mass + left, l - 1
        else:
            mass, r = mass + right, r + 1
    return l, r, mass, last_step_tied


def normal_approximation(n, q, confidence):
    """Central normal interval, rounded out with continuity correction, then
    shortened by one on the right if that still reaches the confidence."""
    mean, sd = n * q, math.sqrt(n * q * (1 - q))
    l_real = float(stats.norm.ppf((1 - confidence) / 2, mean, sd))
    r_real = 2 * mean - l_real
    l, r = math.floor(l_real - 0.5) + 1, math.ceil(r_real - 0.5) + 1
    mass_of = lambda l, r: float(stats.norm.cdf(r - 0.5, mean, sd) - stats.norm.cdf(l - 0.5, mean, sd))
    mass = mass_of(l, r)
    if mass_of(l, r - 1) >= confidence and mass_of(l, r - 1) < mass:
        mass, r = mass_of(l, r - 1), r - 1
    if l <= 0 and r >= n + 1:
        mass = 1.0
    return l, r, mass, False


def order_interval(n, q, confidence):
    exact = n <= CI_APPROX_THRESHOLD
    l, r, mass, last_step_tied = (greedy_binomial if exact else normal_approximation)(n, q, confidence)
    l, r = max(l, 0), min(r, n + 1)
    coverage = float(stats.binom.cdf(r - 1, n, q) - stats.binom.cdf(l - 1, n, q))
    return {
        "n": n, "q": q, "confidence": confidence,
        "lo_order": l, "hi_order": r, "achieved": mass, "exact_coverage": coverage,
        "method": "exact_binomial" if exact else "normal_approximation",
        "last_step_tied": last_step_tied,
    }


def median_ci_cases(rng):
    orders = [order_interval(n, 0.5, c)
              for n in list(range(1, 61)) + [75, 100, 200, 1000] for c in CONFIDENCES]
    orders += [order_interval(n, q, 0.95) for n in (10, 29, 40, 120) for q in (0.25, 0.9)]
    samples = []
    for n in (5, 6, 10, 20, 30, 31, 50):
        values = [round(float(v), 4) for v in rng.normal(100.0, 10.0, n)]
        ci = order_interval(n, 0.5, 0.95)
        ordered = sorted(values)
        lo = ordered[ci["lo_order"] - 1] if ci["lo_order"] >= 1 else None
        hi = ordered[ci["hi_order"] - 1] if ci["hi_order"] <= n else None
        samples.append({"values": values, "confidence": 0.95,
                        "median": float(np.median(values)), "lo": lo, "hi": hi})
    return {"orders": orders, "samples": samples}


def tie_groups(values):
    return sorted(np.unique(values, return_counts=True)[1].tolist())


def enumerate_exact_p(old, new):
    """Exact two-sided p with ties, by brute force over every split of the
    pooled values: twice the smaller of P(U_old <= u_old) and P(U_old >= u_old),
    capped at 1, and 1 when U_old = U_new. Where both samples hold two or more
    values it is checked against scipy's exact permutation distribution."""
    pooled = np.concatenate([old, new])
    twice_ranks = (2 * stats.rankdata(pooled)).astype(int)
    n1, n2 = len(old), len(new)
    twice_u = lambda idx: sum(twice_ranks[i] for i in idx) - n1 * (n1 + 1)
    observed = twice_u(range(n1))
    if observed == n1 * n2:
        return 1.0
    below = above = 0
    for idx in itertools.combinations(range(n1 + n2), n1):
        u = twice_u(idx)
        below += u <= observed
        above += u >= observed
    p = min(1.0, 2 * min(below, above) / math.comb(n1 + n2, n1))
    if n1 >= 2 and n2 >= 2:
        exact = stats.PermutationMethod(n_resamples=np.inf)
        reference = stats.mannwhitneyu(old, new, alternative="two-sided", method=exact).pvalue
        assert abs(p - reference) <= 1e-12, (old, new, p, reference)
    return p


def utest_case(old, new, kind):
    old, new = list(map(float, old)), list(map(float, new))
    u_old = float(stats.mannwhitneyu(old, new, method="asymptotic").statistic)
    if kind == "exact_with_ties":
        p = enumerate_exact_p(np.array(old), np.array(new))
    else:
        method = "exact" if kind == "exact" else "asymptotic"
        p = float(stats.mannwhitneyu(old, new, alternative="two-sided",
                                     method=method, use_continuity=True).pvalue)
    return {"old": old, "new": new, "method": kind, "u_old": u_old, "p": p}


def distinct_pair(rng, n1, n2, shift):
    while True:
        old = np.round(rng.normal(0.0, 1.0, n1), 6)
        new = np.round(rng.normal(shift, 1.0, n2), 6)
        if len(np.unique(np.concatenate([old, new]))) == n1 + n2:
            return old, new


def tied_pair(rng, n1, n2, levels, shift):
    while True:
        old = rng.integers(0, levels, n1).astype(float)
        new = (rng.integers(0, levels, n2) + shift).astype(float)
        pooled = np.concatenate([old, new])
        if len(np.unique(pooled)) not in (1, len(pooled)):
            return old, new


def utest_cases(rng):
    cases = []
    exact_sizes = [(2, 2), (3, 3), (2, 5), (4, 4), (5, 5), (5, 8), (6, 6), (8, 10),
                   (10, 10), (12, 7), (15, 15), (20, 20), (25, 30), (30, 30), (40, 45),
                   (50, 50), (1, 50)]
    for i, (n1, n2) in enumerate(exact_sizes):
        old, new = distinct_pair(rng, n1, n2, shift=(0.0, 0.5, 1.5)[i % 3])
        cases.append(utest_case(old, new, "exact"))
    for i, (n1, n2) in enumerate([(51, 51), (60, 60), (55, 40), (60, 10), (2, 58)]):
        old, new = distinct_pair(rng, n1, n2, shift=(0.0, 0.4, 1.0)[i % 3])
        cases.append(utest_case(old, new, "normal_approximation"))
    for i, (n1, n2) in enumerate([(2, 2), (3, 4), (5, 5), (6, 6), (4, 9), (8, 8),
                                  (10, 10), (1, 6), (7, 3)]):
        old, new = tied_pair(rng, n1, n2, levels=(3, 5, 8)[i % 3], shift=i % 2)
        cases.append(utest_case(old, new, "exact_with_ties"))
    for i, (n1, n2) in enumerate([(26, 26), (30, 40), (60, 60), (26, 5), (40, 12)]):
        old, new = tied_pair(rng, n1, n2, levels=(6, 20, 40)[i % 3], shift=i % 2)
        cases.append(utest_case(old, new, "normal_approximation"))
    for case in cases:
        case["tie_groups"] = tie_groups(case["old"] + case["new"])
    return cases


def special_cases():
    xs = [round(x, 3) for x in np.concatenate([np.linspace(-6, 6, 49), np.linspace(6.5, 26, 40)])]
    ps = [1e-300, 1e-12, 1e-6, 0.001, 0.005, 0.025, 0.1, 0.3, 0.5, 0.7, 0.9, 0.975, 0.999999]
    return {
        "erfc": [[x, float(special.erfc(x))] for x in xs],
        "normal_ppf": [[p, float(stats.norm.ppf(p))] for p in ps],
    }


def main():
    out = output_directory(__doc__)
    rng = np.random.default_rng(SEED)
    versions = {"numpy": np.__version__, "scipy": scipy.__version__, "seed": SEED}
    files = {
        "quantiles.json": quantile_cases(rng),
        "median_ci.json": median_ci_cases(rng),
        "utest.json": utest_cases(rng),
        "special.json": special_cases(),
    }
    write_fixtures(out, versions, files)


def output_directory(docstring):
    """The --out directory (created if missing), with the first line of the
    calling script's docstring as the help text."""
    parser = argparse.ArgumentParser(description=docstring.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT,
                        help="directory for the JSON files (default: %(default)s)")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    return out


def write_fixtures(out, versions, files):
    """Writes each {name: cases} entry as out/name, stamped with `versions`."""
    for name, cases in files.items():
        path = out / name
        path.write_text(json.dumps({"generated_by": versions, "cases": cases}, indent=1) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
