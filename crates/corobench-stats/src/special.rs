//! Special functions the tests need: the complementary error function, the
//! standard normal distribution and binomial coefficients.
//!
//! Written out here rather than pulled from a crate because the whole crate
//! needs only these few functions, and every one is checked against scipy in
//! `tests/fixtures`.

use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// Below this argument `erfc` uses the power series of `erf`; above it, the
/// continued fraction, which converges quickly there and keeps full relative
/// precision in the far tail.
const ERFC_SERIES_LIMIT: f64 = 2.0;

/// Enough terms for either expansion to reach double precision with room to spare.
const MAX_TERMS: usize = 10_000;

/// The complementary error function, erfc(x) = 1 − erf(x), with close to full
/// relative precision over the whole real line (it underflows to 0 past x ≈ 26.5).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < ERFC_SERIES_LIMIT {
        1.0 - erf_series(x)
    } else {
        erfc_continued_fraction(x)
    }
}

/// erf(x) = 2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (2n+1)!!, a series of positive
/// terms, so nothing cancels for moderate x ≥ 0.
fn erf_series(x: f64) -> f64 {
    let two_x_squared = 2.0 * x * x;
    let mut term = x;
    let mut sum = x;
    for n in 1..MAX_TERMS {
        term *= two_x_squared / (2 * n + 1) as f64;
        sum += term;
        if term <= sum * f64::EPSILON * 0.25 {
            break;
        }
    }
    2.0 / PI.sqrt() * (-x * x).exp() * sum
}

/// erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))), evaluated
/// with the modified Lentz method; valid for x > 0, fast for x ≥ 2.
fn erfc_continued_fraction(x: f64) -> f64 {
    let tiny = 1e-300;
    let mut value = x;
    let mut c = x;
    let mut d = 0.0;
    for k in 1..MAX_TERMS {
        let a = k as f64 / 2.0;
        d = x + a * d;
        d = if d == 0.0 { 1.0 / tiny } else { 1.0 / d };
        c = x + a / c;
        if c == 0.0 {
            c = tiny;
        }
        let delta = c * d;
        value *= delta;
        if (delta - 1.0).abs() <= f64::EPSILON {
            break;
        }
    }
    (-x * x).exp() / PI.sqrt() / value
}

/// Φ(z): probability that a standard normal variable is ≤ z.
pub fn std_normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z * FRAC_1_SQRT_2)
}

/// 1 − Φ(z), computed without cancellation for large z.
pub fn std_normal_sf(z: f64) -> f64 {
    0.5 * erfc(z * FRAC_1_SQRT_2)
}

/// Φ⁻¹(p) for p in (0, 1), by bisection on Φ: slow-ish (≈ 100 evaluations)
/// but exact to the last bit Φ can resolve, and only called once per interval.
pub fn std_normal_inv_cdf(p: f64) -> f64 {
    debug_assert!(p > 0.0 && p < 1.0, "inverse normal CDF needs p in (0, 1)");
    let (mut lo, mut hi) = (-40.0_f64, 40.0_f64);
    loop {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            return mid;
        }
        if std_normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
}

/// The binomial coefficient C(n, k) as a float; exact while it stays below 2⁵³.
pub fn choose(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    let mut value = 1.0;
    for i in 1..=k {
        value = value * (n - k + i) as f64 / i as f64;
    }
    value
}

/// ln C(n, k), for coefficients too large for `choose`.
pub fn ln_choose(n: usize, k: usize) -> f64 {
    if k > n {
        return f64::NEG_INFINITY;
    }
    let k = k.min(n - k);
    (1..=k).map(|i| ((n - k + i) as f64 / i as f64).ln()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(f64::MIN_POSITIVE)
    }

    #[test]
    fn erfc_meets_its_identities() {
        assert_eq!(erfc(0.0), 1.0);
        assert!(erfc(f64::NAN).is_nan());
        for &x in &[0.1, 0.7, 1.9, 2.0, 2.1, 5.0] {
            assert!(close(erfc(-x), 2.0 - erfc(x), 1e-15), "x = {x}");
        }
        assert!(erfc(30.0) == 0.0);
    }

    #[test]
    fn erfc_is_continuous_where_the_method_switches() {
        let below = erfc(ERFC_SERIES_LIMIT - 1e-12);
        let above = erfc(ERFC_SERIES_LIMIT);
        assert!(close(below, above, 1e-10), "{below} vs {above}");
    }

    #[test]
    fn inverse_normal_cdf_inverts_the_cdf() {
        for &p in &[1e-12, 0.001, 0.025, 0.5, 0.8, 0.975, 0.999_999] {
            assert!(
                close(std_normal_cdf(std_normal_inv_cdf(p)), p, 1e-12),
                "p = {p}"
            );
        }
        assert!(std_normal_inv_cdf(0.5).abs() < 1e-15);
    }

    #[test]
    fn binomial_coefficients_are_exact_for_small_arguments() {
        assert_eq!(choose(10, 5), 252.0);
        assert_eq!(choose(30, 15), 155_117_520.0);
        assert_eq!(choose(5, 0), 1.0);
        assert_eq!(choose(3, 4), 0.0);
        assert!(close(ln_choose(100, 50), choose(100, 50).ln(), 1e-13));
        assert_eq!(ln_choose(3, 4), f64::NEG_INFINITY);
    }
}
