//! What the reports say of a capacity search, written once so that the
//! formats agree: the names JSON gives its kinds and verdicts, and the
//! stored scenario behind each rate.

use corobench_model::{CapacityEstimate, RateVerdict, RunAnalysis};

/// The estimate's kind as JSON names it: `estimated`, `at_least`, ….
pub(crate) fn kind_id(estimate: &CapacityEstimate) -> &'static str {
    match estimate {
        CapacityEstimate::Estimated { .. } => "estimated",
        CapacityEstimate::AtLeast { .. } => "at_least",
        CapacityEstimate::Below { .. } => "below",
        CapacityEstimate::SingleRate { .. } => "single_rate",
        CapacityEstimate::NotDecreasing => "not_decreasing",
        CapacityEstimate::NoTrials => "no_trials",
    }
}

/// A rate's verdict as JSON names it.
pub(crate) fn verdict_id(verdict: RateVerdict) -> &'static str {
    match verdict {
        RateVerdict::Pass => "pass",
        RateVerdict::Fail => "fail",
        RateVerdict::GeneratorLimit => "generator_limit",
        RateVerdict::Undecided => "undecided",
    }
}

/// The stored key of the scenario that holds a rate's trials.
pub(crate) fn rate_scenario_key(analysis: &RunAnalysis, scenario_index: u32) -> Option<String> {
    analysis
        .scenarios
        .iter()
        .find(|s| s.scenario.index == scenario_index)
        .map(|s| s.scenario.key.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimated(extrapolated: bool, monotone: bool) -> CapacityEstimate {
        CapacityEstimate::Estimated {
            estimate: 4_700.0,
            lo: 4_150.0,
            hi: 5_600.0,
            confidence: 0.95,
            extrapolated,
            monotone,
        }
    }

    #[test]
    fn kinds_are_named_as_json_names_them() {
        for estimate in [
            estimated(false, true),
            CapacityEstimate::AtLeast {
                rate: 1.0,
                generator_limit: false,
            },
            CapacityEstimate::Below { rate: 1.0 },
            CapacityEstimate::SingleRate { rate: 1.0 },
            CapacityEstimate::NotDecreasing,
            CapacityEstimate::NoTrials,
        ] {
            let json = serde_json::to_value(&estimate).unwrap();
            assert_eq!(json["kind"], kind_id(&estimate));
        }
        for verdict in [
            RateVerdict::Pass,
            RateVerdict::Fail,
            RateVerdict::GeneratorLimit,
            RateVerdict::Undecided,
        ] {
            assert_eq!(serde_json::to_value(verdict).unwrap(), verdict_id(verdict));
        }
    }
}
