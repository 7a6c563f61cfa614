//! Number formatting for people. The report crate owns the rules; this
//! module adapts them to the integer counters the live output shows.

use corobench_report::units;

pub use corobench_report::units::{bytes, latency_us};

/// `1234567` → `1,234,567`.
#[must_use]
pub fn thousands(n: u64) -> String {
    units::thousands(n as f64)
}

/// A rate rounded to a whole number with separators: `93,120`.
#[must_use]
pub fn rate(per_s: f64) -> String {
    units::thousands(per_s.round().max(0.0))
}

/// A percentile label: `p50`, `p99.9`, and `max` for 100.
#[must_use]
pub fn percentile_label(p: f64) -> String {
    if (p - 100.0).abs() < f64::EPSILON {
        "max".to_string()
    } else {
        units::percentile_label(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(rate(93_119.6), "93,120");
        assert_eq!(percentile_label(99.9), "p99.9");
        assert_eq!(percentile_label(100.0), "max");
    }
}
