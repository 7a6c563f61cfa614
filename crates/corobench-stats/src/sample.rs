//! Input checks shared by every statistic: a sample must be non-empty and finite.

use crate::StatsError;

/// Checks that `values` is non-empty and finite; `what` names the input in errors.
pub(crate) fn check_finite(what: &'static str, values: &[f64]) -> Result<(), StatsError> {
    if values.is_empty() {
        return Err(StatsError::EmptySample { what });
    }
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(StatsError::NonFinite {
            what,
            index,
            value: values[index],
        }),
        None => Ok(()),
    }
}

/// Checks that `values` is non-empty, finite and positive (> 0), as logarithms need.
pub(crate) fn check_positive(what: &'static str, values: &[f64]) -> Result<(), StatsError> {
    check_finite(what, values)?;
    match values.iter().position(|&v| v <= 0.0) {
        Some(index) => Err(StatsError::NonPositive {
            what,
            index,
            value: values[index],
        }),
        None => Ok(()),
    }
}

/// A sorted copy of a checked sample.
pub(crate) fn sorted_copy(what: &'static str, values: &[f64]) -> Result<Vec<f64>, StatsError> {
    check_finite(what, values)?;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Ok(sorted)
}

/// Checks a confidence level: (0, 1].
pub(crate) fn check_confidence(confidence: f64) -> Result<(), StatsError> {
    if confidence > 0.0 && confidence <= 1.0 {
        Ok(())
    } else {
        Err(StatsError::ConfidenceOutOfRange { confidence })
    }
}

/// Checks a significance level: (0, 1).
pub(crate) fn check_alpha(alpha: f64) -> Result<(), StatsError> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        Err(StatsError::AlphaOutOfRange { alpha })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_non_finite_samples_are_named() {
        assert_eq!(
            check_finite("old", &[]),
            Err(StatsError::EmptySample { what: "old" })
        );
        let err = check_finite("new", &[1.0, f64::INFINITY]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "value #1 of the new sample is inf: statistics need finite numbers, \
             drop or re-measure that trial"
        );
        assert!(matches!(
            check_finite("sample", &[f64::NAN]),
            Err(StatsError::NonFinite { index: 0, .. })
        ));
    }

    #[test]
    fn sorted_copy_sorts_without_touching_the_input() {
        let input = [3.0, -1.0, 2.0];
        assert_eq!(sorted_copy("sample", &input).unwrap(), vec![-1.0, 2.0, 3.0]);
        assert_eq!(input, [3.0, -1.0, 2.0]);
    }

    #[test]
    fn levels_are_range_checked() {
        assert!(check_confidence(0.95).is_ok());
        assert!(check_confidence(1.0).is_ok());
        assert!(check_confidence(0.0).is_err());
        assert!(check_confidence(f64::NAN).is_err());
        assert!(check_alpha(0.05).is_ok());
        assert!(check_alpha(1.0).is_err());
        assert!(check_alpha(-0.1).is_err());
    }
}
