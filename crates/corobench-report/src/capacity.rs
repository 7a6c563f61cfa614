//! What the HTML, CSV and Go benchmark reports say of a capacity search:
//! the capacity, its interval and how the search ended as text, the
//! comparison with the baseline, and the stored scenario behind a search
//! (for its workload and its name). Written once, so the formats agree.

use corobench_model::{
    CapacityComparison, CapacityEstimate, RateVerdict, RunAnalysis, ScenarioAnalysis,
    ScenarioCapacity,
};

use crate::units;

/// The capacity as a reader quotes it: `4.70k req/s`, `≥ 12.0k req/s
/// (generator limit)`, `≥ 16.0k req/s (max rate)`, `< 375 req/s`, or `—`
/// when the trials give no capacity.
pub(crate) fn estimate_text(estimate: &CapacityEstimate) -> String {
    match *estimate {
        CapacityEstimate::Estimated { estimate, .. } => format!("{} req/s", units::si3(estimate)),
        CapacityEstimate::AtLeast {
            rate,
            generator_limit,
        } => {
            let why = if generator_limit {
                "generator limit"
            } else {
                "max rate"
            };
            format!("≥ {} req/s ({why})", units::si3(rate))
        }
        CapacityEstimate::Below { rate } => format!("< {} req/s", units::si3(rate)),
        CapacityEstimate::SingleRate { .. }
        | CapacityEstimate::NotDecreasing
        | CapacityEstimate::NoTrials => "—".to_owned(),
    }
}

/// `[4.15k, 5.60k] 95%` for an estimate; `—` for the bounds alone, which
/// have no interval.
pub(crate) fn interval_text(estimate: &CapacityEstimate) -> String {
    match *estimate {
        CapacityEstimate::Estimated {
            lo, hi, confidence, ..
        } => format!(
            "[{}, {}] {}",
            end(lo),
            end(hi),
            units::whole_pct(confidence)
        ),
        _ => "—".to_owned(),
    }
}

/// An interval's end: `4.15k`, or `∞` where resamples left the rates tried.
fn end(v: f64) -> String {
    if v.is_finite() {
        units::si3(v)
    } else {
        "∞".to_owned()
    }
}

/// How the search ended, in words: what a reader needs to trust the
/// figure, or to know why there is none.
pub(crate) fn ending_text(estimate: &CapacityEstimate) -> String {
    match *estimate {
        CapacityEstimate::Estimated {
            between, monotone, ..
        } => {
            let irregular = if monotone {
                ""
            } else {
                "; pass fractions do not fall steadily with the rate: noise, or not only a load limit"
            };
            format!(
                "between {} (passed) and {} (failed){irregular}",
                units::si3(between[0]),
                units::si3(between[1])
            )
        }
        CapacityEstimate::AtLeast {
            generator_limit: true,
            ..
        } => "every rate passed; the generator could offer no more".to_owned(),
        CapacityEstimate::AtLeast { .. } => {
            "every rate passed, up to the highest allowed".to_owned()
        }
        CapacityEstimate::Below { .. } => "every rate failed, down to the lowest tried".to_owned(),
        CapacityEstimate::SingleRate { rate } => format!(
            "passes and failures at {} req/s only: no curve to fit",
            units::si3(rate)
        ),
        CapacityEstimate::NotDecreasing => {
            "failures do not grow with the rate: not a capacity limit".to_owned()
        }
        CapacityEstimate::NoTrials => "no trial measured anything".to_owned(),
    }
}

/// How a search ended, and whether it met the generator's limit beside
/// an estimate (the estimate then rests on rates where the generator was
/// near its end).
pub(crate) fn search_ending(search: &ScenarioCapacity) -> String {
    let mut text = ending_text(&search.estimate);
    if let (Some(limit), CapacityEstimate::Estimated { .. }) =
        (search.generator_limit, &search.estimate)
    {
        text.push_str(&format!(
            "; the generator could not drive {} req/s: rates from there say little about the server",
            units::si3(limit)
        ));
    }
    let limited: u32 = search.rates.iter().map(|r| r.generator_limited).sum();
    if limited > 0 {
        let all: u32 = search
            .rates
            .iter()
            .map(|r| r.passed + r.failed + r.generator_limited + r.broken)
            .sum();
        text.push_str(&format!(
            "; {limited} of {all} trials were limited by the generator (out of CPU, or late to \
             send while the server answered in time), left out and tried again"
        ));
    }
    text
}

/// The capacity, its interval and how the search ended, on one line:
/// `4.70k req/s [4.15k, 5.60k] 95% — passes turn to failures within the
/// rates tried`, or how it ended alone when there is no figure.
pub(crate) fn summary_text(estimate: &CapacityEstimate) -> String {
    let figure = match estimate {
        CapacityEstimate::Estimated { .. } => {
            format!("{} {}", estimate_text(estimate), interval_text(estimate))
        }
        CapacityEstimate::AtLeast { .. } | CapacityEstimate::Below { .. } => {
            estimate_text(estimate)
        }
        CapacityEstimate::SingleRate { .. }
        | CapacityEstimate::NotDecreasing
        | CapacityEstimate::NoTrials => return ending_text(estimate),
    };
    format!("{figure} — {}", ending_text(estimate))
}

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

/// `0.50× [0.41, 0.62]`: b's capacity over a's, with its interval.
pub(crate) fn ratio_text(comparison: &CapacityComparison) -> String {
    format!(
        "{}× [{}, {}]",
        ratio_number(comparison.ratio),
        ratio_number(comparison.lo),
        ratio_number(comparison.hi)
    )
}

fn ratio_number(ratio: f64) -> String {
    if ratio.is_finite() {
        format!("{ratio:.2}")
    } else {
        "∞".to_owned()
    }
}

/// The analysed scenario of the search's first rate that the run holds:
/// every rate of a search shares its target, parameters, workload and
/// connections, so any of them names the search.
pub(crate) fn first_scenario<'a>(
    analysis: &'a RunAnalysis,
    search: &ScenarioCapacity,
) -> Option<&'a ScenarioAnalysis> {
    search.rates.iter().find_map(|rate| {
        analysis
            .scenarios
            .iter()
            .find(|s| s.scenario.index == rate.scenario_index)
    })
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

    fn estimated(monotone: bool) -> CapacityEstimate {
        CapacityEstimate::Estimated {
            estimate: 4_700.0,
            lo: 4_150.0,
            hi: 5_600.0,
            confidence: 0.95,
            between: [4_500.0, 5_000.0],
            monotone,
        }
    }

    #[test]
    fn every_ending_reads_as_a_reader_quotes_it() {
        let cases = [
            (estimated(true), "4.70k req/s", "[4.15k, 5.60k] 95%"),
            (
                CapacityEstimate::AtLeast {
                    rate: 12_000.0,
                    generator_limit: true,
                },
                "≥ 12.0k req/s (generator limit)",
                "—",
            ),
            (
                CapacityEstimate::AtLeast {
                    rate: 16_000.0,
                    generator_limit: false,
                },
                "≥ 16.0k req/s (max rate)",
                "—",
            ),
            (CapacityEstimate::Below { rate: 375.0 }, "< 375 req/s", "—"),
            (CapacityEstimate::SingleRate { rate: 1_500.0 }, "—", "—"),
            (CapacityEstimate::NotDecreasing, "—", "—"),
            (CapacityEstimate::NoTrials, "—", "—"),
        ];
        for (estimate, capacity, interval) in cases {
            assert_eq!(estimate_text(&estimate), capacity);
            assert_eq!(interval_text(&estimate), interval);
            assert!(!ending_text(&estimate).is_empty());
        }
    }

    #[test]
    fn an_estimate_names_its_bracket_and_says_when_it_is_irregular() {
        assert_eq!(
            ending_text(&estimated(true)),
            "between 4.50k (passed) and 5.00k (failed)"
        );
        assert!(ending_text(&estimated(false)).contains("do not fall steadily"));
        let open = CapacityEstimate::Estimated {
            estimate: 4_700.0,
            lo: 4_150.0,
            hi: f64::INFINITY,
            confidence: 0.95,
            between: [4_500.0, 5_000.0],
            monotone: true,
        };
        assert_eq!(interval_text(&open), "[4.15k, ∞] 95%");
    }

    #[test]
    fn kinds_are_named_as_json_names_them() {
        for estimate in [
            estimated(true),
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
