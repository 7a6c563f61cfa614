//! How precisely a median is known. One definition serves both the runner's
//! adaptive stop (`--until-ci`) and the report's wide-interval warning, so
//! the two can never disagree on the same trials at the same confidence.

use corobench_model::MetricSummary;

use super::scenarios::summarize;

/// The larger distance from the median to an end of its confidence
/// interval, relative to the median: benchstat's `± x%`. `None` while the
/// interval is unbounded (too few values) or the median is not positive.
#[must_use]
pub fn relative_half_width(summary: &MetricSummary) -> Option<f64> {
    let (lo, hi) = (summary.ci_lo?, summary.ci_hi?);
    (summary.median > 0.0).then(|| (hi / summary.median - 1.0).max(1.0 - lo / summary.median))
}

/// [`relative_half_width`] of the median of `values` at `confidence`.
#[must_use]
pub fn median_precision(values: &[f64], confidence: f64) -> Option<f64> {
    summarize(values, confidence).and_then(|summary| relative_half_width(&summary))
}

#[cfg(test)]
mod tests {
    use super::median_precision;

    #[test]
    fn precision_needs_enough_values_and_narrows_with_agreement() {
        assert_eq!(median_precision(&[], 0.95), None);
        assert_eq!(
            median_precision(&[100.0; 5], 0.95),
            None,
            "5 values bound no 95% interval"
        );
        assert_eq!(median_precision(&[100.0; 6], 0.95), Some(0.0));
        let spread = median_precision(&[90.0, 95.0, 100.0, 100.0, 105.0, 110.0], 0.95).unwrap();
        assert!((spread - 0.10).abs() < 1e-12, "{spread}");
    }
}
