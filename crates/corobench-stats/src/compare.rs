//! benchstat's comparison helpers: relative change, the `± x%` spread of a
//! summary, the `~`/delta cell, the `p=… n=…` note and the geomean of ratios.
//!
//! Formatting lives here, not in a reporter, because the rules (when to show
//! `~`, `?` or `∞`) are part of the statistics and must be the same in every
//! output format.

use crate::StatsError;
use crate::sample::check_finite;

/// The relative change new/old − 1: `Some(0.0)` when equal (including 0 and 0),
/// `None` when old is 0 and new is not (no finite ratio exists).
pub fn relative_delta(old: f64, new: f64) -> Option<f64> {
    if old == new {
        Some(0.0)
    } else if old == 0.0 {
        None
    } else {
        Some(new / old - 1.0)
    }
}

/// benchstat's delta cell for two centers and the comparison's p-value:
/// `~` when p > alpha (p = alpha counts as significant), `0.00%` when the
/// centers are equal, `?` when old is 0, else the change as `%+.2f%%`
/// (e.g. `+12.34%`, `-6.98%`).
pub fn format_delta(old: f64, new: f64, p: f64, alpha: f64) -> String {
    if p > alpha {
        return "~".to_string();
    }
    if old == new {
        "0.00%".to_string()
    } else if old == 0.0 {
        "?".to_string()
    } else {
        format_signed_pct(new / old - 1.0)
    }
}

/// A relative change or ratio − 1 as benchstat prints it: `%+.2f%%`.
pub fn format_signed_pct(delta: f64) -> String {
    format!("{:+.2}%", delta * 100.0)
}

/// The `± x%` spread of a confidence interval around its center, as
/// benchstat's `PctRangeString`: max(hi/center − 1, 1 − lo/center) as `%.0f%%`;
/// `∞` when a bound is infinite; `?` when a bound's sign differs from the
/// center's; `0%` when the center is 0 (then both bounds are 0 too). As in
/// benchstat, a negative center yields a negative figure (`-10%`).
pub fn format_pct_range(center: f64, lo: f64, hi: f64) -> String {
    if lo.is_infinite() || hi.is_infinite() {
        return "∞".to_string();
    }
    let center_sign = sign(center);
    if center_sign != sign(lo) || center_sign != sign(hi) {
        return "?".to_string();
    }
    if center == 0.0 {
        return "0%".to_string();
    }
    let spread = (hi / center - 1.0).max(1.0 - lo / center);
    format!("{:.0}%", spread * 100.0)
}

/// benchstat's note after a delta: `p=0.008 n=5`, `p=0.008 n=5+6` for unequal
/// sizes; the `p=` part is left out when p is exactly 0.
pub fn format_p_and_n(p: f64, n_old: usize, n_new: usize) -> String {
    let p_part = if p == 0.0 {
        String::new()
    } else {
        format!("p={p:.3} ")
    };
    if n_old == n_new {
        format!("{p_part}n={n_old}")
    } else {
        format!("{p_part}n={n_old}+{n_new}")
    }
}

/// The geometric mean of the per-row ratios new/old over `(old, new)` rows:
/// benchstat's "vs base" geomean (not the ratio of the geomeans). A row with
/// old = new (0/0 included) counts as ratio 1. Errors: no rows, a non-finite
/// value, old = 0 with new ≠ 0, or a ratio ≤ 0 (values of mixed sign).
pub fn geomean_of_ratios(rows: &[(f64, f64)]) -> Result<f64, StatsError> {
    if rows.is_empty() {
        return Err(StatsError::EmptySample { what: "rows" });
    }
    let mut ln_sum = 0.0;
    for (index, &(old, new)) in rows.iter().enumerate() {
        check_finite("rows", &[old, new]).map_err(|_| StatsError::NonFinite {
            what: "rows",
            index,
            value: if old.is_finite() { new } else { old },
        })?;
        // 0/0 counts as "no change"; x/0 becomes ∞ and is rejected below.
        let ratio = if old == new { 1.0 } else { new / old };
        if !(ratio > 0.0 && ratio.is_finite()) {
            return Err(StatsError::NonPositive {
                what: "ratios",
                index,
                value: ratio,
            });
        }
        ln_sum += ratio.ln();
    }
    Ok((ln_sum / rows.len() as f64).exp())
}

/// −1, 0 or 1, like Go's `mathx.Sign`.
fn sign(x: f64) -> i8 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_cells() {
        assert_eq!(format_delta(100.0, 110.0, 0.01, 0.05), "+10.00%");
        assert_eq!(format_delta(100.0, 93.02, 0.0, 0.05), "-6.98%");
        assert_eq!(format_delta(100.0, 110.0, 0.06, 0.05), "~");
        assert_eq!(format_delta(100.0, 110.0, 0.05, 0.05), "+10.00%");
        assert_eq!(format_delta(5.0, 5.0, 0.01, 0.05), "0.00%");
        assert_eq!(format_delta(0.0, 5.0, 0.01, 0.05), "?");
        // Unequal centers whose ratio rounds to 1 still get a sign, as in benchstat.
        assert_eq!(format_delta(1.0, 1.0 + f64::EPSILON, 0.01, 0.05), "+0.00%");
        assert_eq!(relative_delta(0.0, 0.0), Some(0.0));
        assert_eq!(relative_delta(0.0, 1.0), None);
        assert_eq!(relative_delta(4.0, 5.0), Some(0.25));
    }

    #[test]
    fn range_cells() {
        assert_eq!(format_pct_range(100.0, 98.0, 103.0), "3%");
        assert_eq!(format_pct_range(100.0, 90.0, 101.0), "10%");
        assert_eq!(format_pct_range(100.0, f64::NEG_INFINITY, 101.0), "∞");
        assert_eq!(format_pct_range(1.0, -1.0, 2.0), "?");
        // benchstat prints a negative spread for a negative center; we match it.
        assert_eq!(format_pct_range(-10.0, -11.0, -9.0), "-10%");
        assert_eq!(format_pct_range(0.0, 0.0, 0.0), "0%");
        assert_eq!(format_pct_range(0.0, -1.0, 1.0), "?");
    }

    #[test]
    fn p_and_n_notes() {
        assert_eq!(format_p_and_n(0.007_936_5, 5, 5), "p=0.008 n=5");
        assert_eq!(format_p_and_n(0.5, 5, 6), "p=0.500 n=5+6");
        assert_eq!(format_p_and_n(0.0, 1, 1), "n=1");
    }

    #[test]
    fn geomean_of_row_ratios() {
        let gm = geomean_of_ratios(&[(1.0, 2.0), (4.0, 2.0)]).unwrap();
        assert!((gm - 1.0).abs() < 1e-15);
        assert_eq!(geomean_of_ratios(&[(0.0, 0.0), (2.0, 2.0)]), Ok(1.0));
        let gm = geomean_of_ratios(&[(1.0, 2.0), (1.0, 8.0)]).unwrap();
        assert!((gm - 4.0).abs() < 1e-12);
    }

    #[test]
    fn geomean_of_ratios_rejects_what_has_no_ratio() {
        assert_eq!(
            geomean_of_ratios(&[]),
            Err(StatsError::EmptySample { what: "rows" })
        );
        assert!(matches!(
            geomean_of_ratios(&[(1.0, 1.0), (0.0, 3.0)]),
            Err(StatsError::NonPositive { index: 1, .. })
        ));
        assert!(matches!(
            geomean_of_ratios(&[(1.0, -1.0)]),
            Err(StatsError::NonPositive { index: 0, .. })
        ));
        assert!(matches!(
            geomean_of_ratios(&[(1.0, f64::NAN)]),
            Err(StatsError::NonFinite { index: 0, .. })
        ));
    }
}
