//! Published claims against the run's trials: the measured ratio a/b with a
//! distribution-free interval, and one verdict per claim that says why, and
//! what would decide it when the trials cannot.
//!
//! A ratio claim is **consistent** when the interval of a/b overlaps the
//! claim's band (its ratio divided and multiplied by 1 + tolerance) and is
//! no wider than the band; **refuted** when it lies wholly below or above
//! the band; **inconclusive** when the trials are too few for an interval
//! or it is wider than the band. A
//! direction claim is judged by the Mann–Whitney U test. A figure the load
//! generator limited is only a bound of the target's, so a verdict stands
//! only where the bound points.

use corobench_model::{
    Better, ClaimBand, ClaimDirection, ClaimExpectation, ClaimMeasurement, ClaimOutcome,
    ClaimRatio, ClaimRecord, ClaimScenario, ClaimSide, ClaimVerdict, MAX_TRIALS, Metric,
    ScenarioAnalysis, TrialFlag,
};
use corobench_stats::{
    StatsError, hodges_lehmann_ratio, mann_whitney_u_test, min_attainable_p,
    min_samples_for_ratio_ci, ratio_ci,
};

use super::AnalyzeOptions;
use super::scenarios::values_of;

/// The trials per scenario that give both a bounded interval of a median and
/// the smallest p of 0.002 (methodology.md): what advice to rerun suggests.
const RECOMMENDED_TRIALS: usize = 6;

/// Every claim of the run with its verdict, in the spec's order.
pub(crate) fn judge_all(
    claims: &[ClaimRecord],
    scenarios: &[ScenarioAnalysis],
    options: &AnalyzeOptions,
) -> Vec<ClaimVerdict> {
    claims
        .iter()
        .map(|claim| judge(claim, scenarios, options))
        .collect()
}

/// One side as measured: where its values come from and what they are.
struct Side<'a> {
    name: &'static str,
    scenario: &'a ScenarioAnalysis,
    values: Vec<f64>,
    measurement: ClaimMeasurement,
}

fn judge(
    claim: &ClaimRecord,
    scenarios: &[ScenarioAnalysis],
    options: &AnalyzeOptions,
) -> ClaimVerdict {
    let mut verdict = ClaimVerdict {
        claim: claim.clone(),
        a: None,
        b: None,
        ratio: None,
        band: match claim.expectation {
            ClaimExpectation::Ratio { ratio, tolerance } => Some(band(ratio, tolerance)),
            ClaimExpectation::Direction { .. } => None,
        },
        p_value: None,
        outcome: ClaimOutcome::NotMeasured,
        claimed_text: claimed_text(claim.expectation),
        ratio_text: "—".to_owned(),
        verdict_text: String::new(),
        why: String::new(),
    };
    let sides = (
        measured("a", &claim.a, claim.metric, scenarios),
        measured("b", &claim.b, claim.metric, scenarios),
    );
    verdict.a = sides.0.as_ref().ok().map(|s| s.measurement.clone());
    verdict.b = sides.1.as_ref().ok().map(|s| s.measurement.clone());
    let (outcome, why) = match sides {
        (Ok(a), Ok(b)) => judge_measured(claim, [&a, &b], &mut verdict, options),
        (Err(why), _) | (_, Err(why)) => (ClaimOutcome::NotMeasured, why),
    };
    verdict.outcome = outcome;
    verdict.verdict_text = outcome.text().to_owned();
    verdict.why = why;
    verdict
}

/// The verdict on two measured sides; fills in the measured ratio and,
/// for a direction claim, the test's p-value.
fn judge_measured(
    claim: &ClaimRecord,
    sides: [&Side<'_>; 2],
    verdict: &mut ClaimVerdict,
    options: &AnalyzeOptions,
) -> (ClaimOutcome, String) {
    let [a, b] = sides;
    let ratio = measured_ratio(&a.values, &b.values, options.confidence);
    verdict.ratio.clone_from(&ratio);
    verdict.ratio_text = ratio.as_ref().map_or_else(|| "—".to_owned(), ratio_text);
    let judged = match claim.expectation {
        ClaimExpectation::Ratio {
            ratio: claimed,
            tolerance,
        } => judge_ratio(
            ratio.as_ref(),
            (claimed, band(claimed, tolerance)),
            sides,
            options,
        ),
        ClaimExpectation::Direction {
            direction: ClaimDirection::OnlyA,
        } => judge_only_a(&a.values, &b.values),
        ClaimExpectation::Direction { direction } => {
            // Identical samples cannot be ranked: no evidence either way.
            let p = mann_whitney_u_test(&a.values, &b.values).map_or(1.0, |t| t.p);
            verdict.p_value = Some(p);
            let test = Test {
                ratio: ratio.as_ref(),
                p,
                sizes: (a.values.len(), b.values.len()),
                higher: a.measurement.median > b.measurement.median,
            };
            judge_direction(direction, &test, options)
        }
    };
    bounded(judged, claim.metric, sides)
}

/// A side's trials, or why it has none: its target could not run where the
/// run was planned, or no trial of it measured the metric.
fn measured<'a>(
    name: &'static str,
    side: &ClaimSide,
    metric: Metric,
    scenarios: &'a [ScenarioAnalysis],
) -> Result<Side<'a>, String> {
    let key = match &side.resolved {
        ClaimScenario::Unavailable(reason) => {
            return Err(format!(
                "{name} ({}) could not run where the run was planned: {reason}",
                side.selector
            ));
        }
        ClaimScenario::Scenario(key) => key,
    };
    let Some(index) = scenarios.iter().position(|s| &s.scenario.key == key) else {
        return Err(format!("{name}: the run has no scenario {key}"));
    };
    let scenario = &scenarios[index];
    let values = values_of(&scenario.trials, metric);
    let Some(summary) = scenario.metrics.get(&metric).filter(|_| !values.is_empty()) else {
        return Err(no_trial(name, scenario, metric));
    };
    let generator_bound_trials = scenario
        .trials
        .iter()
        .filter(|t| t.values.contains_key(&metric))
        .filter(|t| {
            t.flags
                .iter()
                .any(|f| matches!(f, TrialFlag::GeneratorBound { .. }))
        })
        .count();
    Ok(Side {
        name,
        scenario,
        measurement: ClaimMeasurement {
            scenario: index,
            median: summary.median,
            n: values.len(),
            generator_bound_trials,
        },
        values,
    })
}

/// Why a side measured nothing, with the first failure when one is known.
fn no_trial(name: &str, scenario: &ScenarioAnalysis, metric: Metric) -> String {
    let failure = scenario
        .trials
        .iter()
        .find_map(|t| t.failure.as_deref())
        .map(corobench_model::failure_line);
    let why = match (scenario.trials_ok, scenario.trials_failed, failure) {
        (0, 0, _) => {
            "none ran (its target was not built or not verified; see the run's notes)".to_owned()
        }
        (0, failed, Some(first)) => format!("{failed} failed, e.g. {first}"),
        (0, failed, None) => format!("{failed} failed"),
        (ok, _, _) => format!("{ok} succeeded, but none measured {}", metric.label()),
    };
    format!("{name} ({}) has no successful trial: {why}", scenario.label)
}

/// The ratios a ratio claim allows: its ratio divided and multiplied by
/// one plus its tolerance.
fn band(ratio: f64, tolerance: f64) -> ClaimBand {
    ClaimBand {
        lo: ratio / (1.0 + tolerance),
        hi: ratio * (1.0 + tolerance),
    }
}

/// `3.06× ±10%`, `a>b`.
fn claimed_text(expectation: ClaimExpectation) -> String {
    match expectation {
        ClaimExpectation::Ratio { ratio, tolerance } => {
            format!("{}× ±{}%", exact(ratio), exact(tolerance * 100.0))
        }
        ClaimExpectation::Direction { direction } => direction.as_str().to_owned(),
    }
}

/// The measured a/b: the Hodges–Lehmann ratio with Moses's interval, or
/// the ratio alone when the trials are too few for an interval; `None`
/// when a value is 0 or less (a ratio compares logarithms).
fn measured_ratio(a: &[f64], b: &[f64], confidence: f64) -> Option<ClaimRatio> {
    match ratio_ci(a, b, confidence) {
        Ok(ci) => Some(ClaimRatio {
            estimate: ci.estimate,
            lo: Some(ci.lo),
            hi: Some(ci.hi),
            confidence: ci.confidence,
        }),
        Err(StatsError::TooFewForInterval { .. }) => {
            let estimate = hodges_lehmann_ratio(a, b).ok()?;
            Some(ClaimRatio {
                estimate,
                lo: None,
                hi: None,
                confidence,
            })
        }
        Err(_) => None,
    }
}

/// `1.69× [1.61, 1.77]`, or `1.69× (no interval)`.
fn ratio_text(ratio: &ClaimRatio) -> String {
    match (ratio.lo, ratio.hi) {
        (Some(lo), Some(hi)) => {
            format!("{}× [{}, {}]", times(ratio.estimate), times(lo), times(hi))
        }
        _ => format!("{}× (no interval)", times(ratio.estimate)),
    }
}

/// A figure as a spec gave it, without trailing zeros: `3.06`, `2`, `12.5`.
fn exact(value: f64) -> String {
    let text = format!("{value}");
    if text.len() > 8 { times(value) } else { text }
}

/// A ratio to three significant digits: `3.06`, `14.9`, `0.482`, `1210`.
pub(crate) fn times(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let digits = 2 - value.abs().log10().floor() as i32;
    let decimals = usize::try_from(digits.max(0)).unwrap_or(0);
    format!("{value:.decimals$}")
}

/// A ratio claim against the measured interval.
fn judge_ratio(
    ratio: Option<&ClaimRatio>,
    (claimed, band): (f64, ClaimBand),
    sides: [&Side<'_>; 2],
    options: &AnalyzeOptions,
) -> Judgement {
    let band_text = format!("{}–{}×", times(band.lo), times(band.hi));
    let Some(ratio) = ratio else {
        return Judgement::inconclusive(
            "a/b has no ratio: a trial measured 0 (or less), and a ratio compares logarithms"
                .to_owned(),
        );
    };
    let measured = format!(
        "measured {} where {}× was claimed",
        ratio_text(ratio),
        exact(claimed)
    );
    let (Some(lo), Some(hi)) = (ratio.lo, ratio.hi) else {
        let least = min_samples_for_ratio_ci(options.confidence)
            .ok()
            .flatten()
            .unwrap_or(RECOMMENDED_TRIALS);
        return Judgement::inconclusive(format!(
            "{measured}: {} and {} trials are too few for a {} interval of the ratio (it needs \
             {least} a side); rerun with --trials {} or more",
            sides[0].values.len(),
            sides[1].values.len(),
            whole_percent(options.confidence),
            least.max(RECOMMENDED_TRIALS)
        ));
    };
    let off = |towards: &str| {
        format!(
            "{measured}: {} (the interval lies wholly {towards} {band_text})",
            percent_apart(ratio.estimate, claimed)
        )
    };
    if hi < band.lo {
        return Judgement::leaning(ClaimOutcome::RefutedLower, off("below"), Some(false));
    }
    if lo > band.hi {
        return Judgement::leaning(ClaimOutcome::RefutedHigher, off("above"), Some(true));
    }
    let spread = (hi / lo).ln();
    let allowed = (band.hi / band.lo).ln();
    if spread > allowed {
        // An interval narrows about as the square root of the trials.
        let trials = sides[0].values.len().max(sides[1].values.len());
        let needed = (trials as f64 * (spread / allowed).powi(2)).ceil();
        return Judgement::inconclusive(format!(
            "{measured}: the interval is wider than the claim's band {band_text}, so it cannot \
             tell; about {} trials per side at this spread (--trials), or a quieter machine, \
             would decide it",
            needed.min(f64::from(MAX_TRIALS)) as u32
        ));
    }
    Judgement::leaning(
        ClaimOutcome::Consistent,
        format!("{measured}: the interval meets the claim's band {band_text}"),
        None,
    )
}

/// A verdict before generator-bound sides are taken into account.
struct Judgement {
    outcome: ClaimOutcome,
    why: String,
    /// Whether the verdict rests on a/b being high (`Some(true)`: it is
    /// above a band, or a>b), low, or on neither (within a band).
    high: Option<bool>,
}

impl Judgement {
    fn inconclusive(why: String) -> Self {
        Self {
            outcome: ClaimOutcome::Inconclusive,
            why,
            high: None,
        }
    }

    fn leaning(outcome: ClaimOutcome, why: String, high: Option<bool>) -> Self {
        Self { outcome, why, high }
    }
}

/// `45% lower`, `12% higher`: how far a measured ratio is from a claimed one.
fn percent_apart(measured: f64, claimed: f64) -> String {
    let change = measured / claimed - 1.0;
    let word = if change < 0.0 { "lower" } else { "higher" };
    format!("{}% {word}", times(change.abs() * 100.0))
}

/// `95%`.
fn whole_percent(fraction: f64) -> String {
    format!("{:.0}%", fraction * 100.0)
}

/// What the U test found for a direction claim.
struct Test<'r> {
    ratio: Option<&'r ClaimRatio>,
    p: f64,
    /// Trials of a and of b.
    sizes: (usize, usize),
    /// a's median is above b's.
    higher: bool,
}

/// A direction claim against the U test of a and b.
fn judge_direction(
    claimed: ClaimDirection,
    test: &Test<'_>,
    options: &AnalyzeOptions,
) -> Judgement {
    let alpha = options.alpha;
    let ratio = test
        .ratio
        .map_or_else(String::new, |r| format!(" ({})", ratio_text(r)));
    let (n_a, n_b) = test.sizes;
    if test.p > alpha {
        let smallest = min_attainable_p(n_a, n_b).unwrap_or(1.0);
        let decide = if smallest > alpha {
            format!(
                "{n_a} and {n_b} trials cannot reach p ≤ {alpha} at all; rerun with --trials 4 or more"
            )
        } else {
            "more trials or a quieter machine could show a difference, if there is one".to_owned()
        };
        return Judgement::inconclusive(format!(
            "no significant difference{ratio}: p={:.3} > {alpha}; {decide}",
            test.p
        ));
    }
    let found = if test.higher { "a>b" } else { "a<b" };
    let found = format!("measured {found}{ratio}, p={:.3} ≤ {alpha}", test.p);
    let outcome = match (claimed, test.higher) {
        // OnlyA is judged by judge_only_a; as a U test it would read a>b.
        (ClaimDirection::AGreater | ClaimDirection::OnlyA, true)
        | (ClaimDirection::ALess, false) => {
            return Judgement::leaning(ClaimOutcome::Consistent, found, Some(test.higher));
        }
        (ClaimDirection::AGreater | ClaimDirection::OnlyA, false) => ClaimOutcome::RefutedLower,
        (ClaimDirection::ALess, true) => ClaimOutcome::RefutedHigher,
    };
    Judgement::leaning(
        outcome,
        format!("{found}, where {} was claimed", claimed.as_str()),
        Some(test.higher),
    )
}

/// "a>0, b=0" against every trial: one trial of b above zero refutes it
/// (b is not zero); b zero throughout and a above zero in some trial
/// agrees; zero on both sides cannot tell a small figure of a from none.
fn judge_only_a(a: &[f64], b: &[f64]) -> Judgement {
    let above = |values: &[f64]| values.iter().filter(|v| **v > 0.0).count();
    let largest = |values: &[f64]| values.iter().copied().fold(0.0_f64, f64::max);
    let (a_above, b_above) = (above(a), above(b));
    if b_above > 0 {
        return Judgement::leaning(
            ClaimOutcome::RefutedLower,
            format!(
                "b measured above 0 in {b_above} of {} trials (up to {}), where b=0 was claimed",
                b.len(),
                times(largest(b))
            ),
            Some(false),
        );
    }
    if a_above > 0 {
        return Judgement::leaning(
            ClaimOutcome::Consistent,
            format!(
                "a measured above 0 in {a_above} of {} trials (up to {}), b was 0 in all {}",
                a.len(),
                times(largest(a)),
                b.len()
            ),
            Some(true),
        );
    }
    Judgement::inconclusive(format!(
        "both were 0 in every trial ({} and {}): a figure of a too small for these trials \
         cannot be told from none; longer or more trials (--trials, duration) could show it",
        a.len(),
        b.len()
    ))
}

/// Which way a generator-bound side leaves the true ratio, if it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lean {
    /// The true a/b is at least the measured one.
    AtLeast,
    /// The true a/b is at most the measured one.
    AtMost,
    /// Nothing is known of the direction.
    Unknown,
}

/// What a generator-bound figure of `metric` is: a lower bound of a rate
/// (the target could have served more), an upper bound of a latency (the
/// generator's own delay is in it), or a figure taken at a load the
/// generator chose (CPU, memory, errors), which bounds nothing.
fn bound_of(metric: Metric) -> (Option<Better>, &'static str) {
    match metric {
        Metric::RequestsPerS => (
            Some(Better::Higher),
            "its req/s is a lower bound of the target's",
        ),
        Metric::LatencyMeanUs
        | Metric::LatencyP50Us
        | Metric::LatencyP99Us
        | Metric::LatencyP999Us => (
            Some(Better::Lower),
            "its latency is an upper bound (the generator's own delay is in it)",
        ),
        _ => (
            None,
            "its figure was taken at the load the generator could send, not at the target's limit",
        ),
    }
}

/// The outcome as far as generator-bound sides allow it: a bound only
/// supports a verdict in the direction it points; the reason says so.
fn bounded(judged: Judgement, metric: Metric, sides: [&Side<'_>; 2]) -> (ClaimOutcome, String) {
    let Judgement { outcome, why, high } = judged;
    let bound: Vec<&Side<'_>> = sides
        .into_iter()
        .filter(|s| s.measurement.generator_bound_trials > 0)
        .collect();
    if bound.is_empty() || outcome == ClaimOutcome::Inconclusive {
        return (outcome, why);
    }
    let (kind, meaning) = bound_of(metric);
    let lean = bound
        .iter()
        .map(|side| match (kind, side.name) {
            (Some(Better::Higher), "a") | (Some(Better::Lower), "b") => Lean::AtLeast,
            (Some(_), _) => Lean::AtMost,
            (None, _) => Lean::Unknown,
        })
        .reduce(|x, y| if x == y { x } else { Lean::Unknown })
        .unwrap_or(Lean::Unknown);
    let who: Vec<String> = bound
        .iter()
        .map(|s| {
            format!(
                "{} ({}) was generator-bound in {} of {} trials",
                s.name, s.scenario.label, s.measurement.generator_bound_trials, s.measurement.n
            )
        })
        .collect();
    let who = who.join(" and ");
    let stands = matches!(
        (lean, high),
        (Lean::AtLeast, Some(true)) | (Lean::AtMost, Some(false))
    );
    if stands {
        return (
            outcome,
            format!("{why}; {who}: {meaning}, which only strengthens this"),
        );
    }
    (
        ClaimOutcome::Inconclusive,
        format!(
            "{why}; but {who}: {meaning}, so '{}' cannot be concluded; give the generator more \
             cores (generator_cpus in the spec) or use fewer connections",
            outcome.text()
        ),
    )
}
