//! A straight line fitted by least squares, with the classical confidence
//! interval of its slope: memory against idle connections gives bytes per
//! connection.
//!
//! The interval is slope ± t(1 − (1 − c)/2, n − 2) · SE(slope), SE from the
//! residuals. The Student t quantile is exact for 1 and 2 degrees of
//! freedom and, above, the Cornish–Fisher expansion of the normal quantile
//! to ν⁻⁴ (Abramowitz & Stegun 26.7.5), within 0.13% of the exact value at
//! 95% from ν = 3 and within 0.001% from ν = 10. (A pairs bootstrap was
//! tried first: with the 9–20 points of a sweep it gave intervals about a
//! fifth too narrow.)

use crate::StatsError;
use crate::bootstrap::Interval;
use crate::special::std_normal_inv_cdf;

/// `y = intercept + slope · x`, fitted by ordinary least squares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineFit {
    pub slope: f64,
    pub intercept: f64,
    /// Points fitted.
    pub points: usize,
}

/// A fitted line and the confidence interval of its slope.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineInterval {
    pub fit: LineFit,
    /// The slope's standard error, from the residuals.
    pub slope_std_error: f64,
    pub slope: Interval,
    pub confidence: f64,
}

/// Fits `y = intercept + slope · x` to `points` `(x, y)`.
///
/// # Errors
/// A point that is not finite, or fewer than two distinct x.
pub fn fit_line(points: &[(f64, f64)]) -> Result<LineFit, StatsError> {
    for (index, &(x, y)) in points.iter().enumerate() {
        if let Some(value) = [x, y].into_iter().find(|v| !v.is_finite()) {
            return Err(StatsError::NonFinite {
                what: "line",
                index,
                value,
            });
        }
    }
    least_squares(points).ok_or(StatsError::TooFewDistinct {
        what: "distinct x values in the line's points",
        found: distinct_x(points),
        needed: 2,
        why: "a slope needs points at two or more x; measure another level",
    })
}

/// [`fit_line`] and the `confidence` interval of its slope.
///
/// # Errors
/// As [`fit_line`]; fewer than three points (no residual to estimate the
/// error from), or a confidence outside (0, 1).
pub fn fit_line_interval(
    points: &[(f64, f64)],
    confidence: f64,
) -> Result<LineInterval, StatsError> {
    let fit = fit_line(points)?;
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(StatsError::ConfidenceOutOfRange { confidence });
    }
    if points.len() < 3 {
        return Err(StatsError::TooFewDistinct {
            what: "points on the line",
            found: points.len(),
            needed: 3,
            why: "an interval of the slope needs a residual; measure another trial",
        });
    }
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let residuals: f64 = points
        .iter()
        .map(|&(x, y)| (y - fit.intercept - fit.slope * x).powi(2))
        .sum();
    let degrees = points.len() - 2;
    let slope_std_error = (residuals / degrees as f64 / sxx).sqrt();
    let half = student_t_quantile(0.5 + confidence / 2.0, degrees) * slope_std_error;
    Ok(LineInterval {
        fit,
        slope_std_error,
        slope: Interval {
            lo: fit.slope - half,
            hi: fit.slope + half,
        },
        confidence,
    })
}

/// The `p` quantile (p in (0.5, 1)) of Student's t with `degrees` ≥ 1.
fn student_t_quantile(p: f64, degrees: usize) -> f64 {
    match degrees {
        1 => (std::f64::consts::PI * (p - 0.5)).tan(),
        2 => (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt(),
        _ => {
            let (z, v) = (std_normal_inv_cdf(p), degrees as f64);
            let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
            z + (z3 + z) / (4.0 * v)
                + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v.powi(2))
                + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v.powi(3))
                + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z)
                    / (92160.0 * v.powi(4))
        }
    }
}

/// The least-squares line, or `None` without two distinct x.
fn least_squares(points: &[(f64, f64)]) -> Option<LineFit> {
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for &(x, y) in points {
        sxx += (x - mean_x) * (x - mean_x);
        sxy += (x - mean_x) * (y - mean_y);
    }
    if points.is_empty() || sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    Some(LineFit {
        slope,
        intercept: mean_y - slope * mean_x,
        points: points.len(),
    })
}

fn distinct_x(points: &[(f64, f64)]) -> usize {
    let mut xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;

    #[test]
    fn an_exact_line_is_recovered_with_a_zero_width_interval() {
        let points: Vec<(f64, f64)> = [1000.0, 5000.0, 10_000.0]
            .iter()
            .flat_map(|&x| [(x, 4e6 + 8192.0 * x); 3])
            .collect();
        let fitted = fit_line_interval(&points, 0.95).unwrap();
        assert!((fitted.fit.slope - 8192.0).abs() < 1e-6, "{fitted:?}");
        assert!((fitted.fit.intercept - 4e6).abs() < 1e-3, "{fitted:?}");
        assert!(fitted.slope.hi - fitted.slope.lo < 1e-6, "{fitted:?}");
    }

    #[test]
    fn a_noisy_slope_lies_within_its_interval() {
        // Known slope 2048 with uniform noise of ±30,000.
        let mut rng = SplitMix64::new(7);
        let points: Vec<(f64, f64)> = [1000.0, 2000.0, 4000.0, 8000.0]
            .iter()
            .flat_map(|&x| [x; 4])
            .map(|x| (x, 1e6 + 2048.0 * x + (rng.unit_f64() - 0.5) * 60_000.0))
            .collect();
        let fitted = fit_line_interval(&points, 0.95).unwrap();
        assert!(fitted.slope.contains(2048.0), "{fitted:?}");
        assert!(fitted.slope.hi - fitted.slope.lo < 10.0, "{fitted:?}");
    }

    /// Reference values: scipy.stats.t.ppf.
    #[test]
    fn t_quantiles_match_the_reference_within_the_stated_error() {
        for (p, degrees, exact, tolerance) in [
            (0.975, 1, 12.706_204_736, 1e-6),
            (0.975, 2, 4.302_652_730, 1e-6),
            (0.975, 3, 3.182_446_305, 0.0013),
            (0.975, 7, 2.364_624_252, 3e-5),
            (0.975, 14, 2.144_786_688, 1e-5),
            (0.995, 10, 3.169_272_667, 5e-5),
        ] {
            let found = student_t_quantile(p, degrees);
            assert!(
                (found / exact - 1.0).abs() < tolerance,
                "t({p}, {degrees}) = {found}, not {exact}"
            );
        }
    }

    #[test]
    fn one_level_or_two_points_give_no_interval() {
        let error = fit_line(&[(5.0, 1.0), (5.0, 2.0)]).unwrap_err();
        assert!(
            matches!(
                error,
                StatsError::TooFewDistinct {
                    found: 1,
                    needed: 2,
                    ..
                }
            ),
            "{error}"
        );
        let error = fit_line_interval(&[(1.0, 1.0), (2.0, 2.0)], 0.95).unwrap_err();
        assert!(
            matches!(error, StatsError::TooFewDistinct { needed: 3, .. }),
            "{error}"
        );
        let error = fit_line(&[(1.0, f64::NAN), (2.0, 1.0)]).unwrap_err();
        assert!(
            matches!(error, StatsError::NonFinite { index: 0, .. }),
            "{error}"
        );
    }
}
