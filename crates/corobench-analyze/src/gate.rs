//! The regression gate of `corobench compare --fail-on`: run B fails when a
//! named metric of a scenario both runs measured is worse than run A's
//! beyond a threshold, and significantly so.
//!
//! Significantly means both: the Mann–Whitney U test of the comparison
//! rejects at alpha, and the whole Moses interval of the Hodges–Lehmann
//! ratio B/A lies beyond the threshold. The U test alone would fail a
//! significant 1 % drop against a 5 % threshold; the point estimate alone
//! would fail a noisy drop the trials cannot tell from no change.

use corobench_model::{
    ChangeEstimator, CompareTable, Gate, GateCheck, GateOutcome, GateRule, Metric,
    MetricComparison, ScenarioAnalysis,
};
use corobench_stats::min_samples_for_ratio_ci;

use super::AnalyzeOptions;

/// How rules are written, for the caller to show beside a syntax error.
pub const EXAMPLE: &str = "rps:-5%,p99:+10%";

/// Text that is not a list of rules: the text quoted, then again with a
/// caret under the fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "\"{text}\": at column {column}: {message}\n  {text}\n  {caret}^",
    caret = " ".repeat(column.saturating_sub(1))
)]
pub struct GateSyntaxError {
    pub text: String,
    /// 1-based character position of the fault.
    pub column: usize,
    pub message: String,
}

/// Parses `rps:-5%,p99:+10%`: comma-separated `METRIC:±PERCENT%` rules,
/// where the sign is the direction that is worse.
///
/// # Errors
/// An empty rule, an unknown metric, a missing sign, number or `%`, or a
/// drop of 100 % or more, with the column where it was found.
pub fn parse_rules(text: &str) -> Result<Vec<GateRule>, GateSyntaxError> {
    let mut rules = Vec::new();
    let mut offset = 0;
    for item in text.split(',') {
        let leading = item.len() - item.trim_start().len();
        rules.push(
            parse_rule(item.trim(), offset + leading).map_err(|(at, message)| GateSyntaxError {
                text: text.to_owned(),
                column: text[..at.min(text.len())].chars().count() + 1,
                message,
            })?,
        );
        offset += item.len() + 1;
    }
    Ok(rules)
}

/// One rule starting at byte `start` of the whole text; an error carries
/// the byte offset of the fault.
fn parse_rule(item: &str, start: usize) -> Result<GateRule, (usize, String)> {
    if item.is_empty() {
        return Err((start, "empty rule: write METRIC:±PERCENT%".to_owned()));
    }
    let Some((written_name, written_threshold)) = item.rsplit_once(':') else {
        return Err((
            start + item.len(),
            format!("expected `:` and a threshold after `{item}`, e.g. `{item}:+10%`"),
        ));
    };
    // Spaces around the colon are no part of either side.
    let (name, threshold) = (written_name.trim_end(), written_threshold.trim());
    let skipped = written_threshold.len() - written_threshold.trim_start().len();
    let metric = Metric::from_name(name).ok_or_else(|| {
        (
            start,
            format!(
                "unknown metric `{name}`; use {} (or the label a table prints, e.g. req/s) \
                 or program:UNIT",
                Metric::words().join(", ")
            ),
        )
    })?;
    let threshold_at = start + written_name.len() + 1 + skipped;
    let fraction = parse_threshold(threshold, threshold_at)?;
    Ok(GateRule {
        metric,
        threshold: fraction,
        text: format!("{name}:{threshold}"),
    })
}

/// How a rule names `metric`: `rps`, `p99`, `program:B/op`.
#[must_use]
pub fn metric_word(metric: Metric) -> String {
    metric
        .word()
        .map_or_else(|| metric.id().to_string(), str::to_owned)
}

/// `-5%` → −0.05; the sign is required because it says which way is worse.
fn parse_threshold(text: &str, at: usize) -> Result<f64, (usize, String)> {
    let sign = match text.chars().next() {
        Some('+') => 1.0,
        Some('-') => -1.0,
        _ => {
            return Err((
                at,
                "expected + or - before the threshold: the direction that is worse \
                 (rps:-5% fails on a drop, p99:+10% on a rise)"
                    .to_owned(),
            ));
        }
    };
    let Some(number) = text[1..].strip_suffix('%') else {
        return Err((at + text.len(), "expected `%` after the number".to_owned()));
    };
    let percent = number
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && *p >= 0.0)
        .ok_or_else(|| {
            (
                at + 1,
                format!("`{number}` is not a percentage, e.g. 5 or 2.5"),
            )
        })?;
    if sign < 0.0 && percent >= 100.0 {
        return Err((
            at + 1,
            "a drop of 100% or more cannot happen to a positive value; use less".to_owned(),
        ));
    }
    Ok(sign * percent / 100.0)
}

/// Checks every rule on every matched scenario that has the rule's metric
/// in both runs; `tables` supply the U tests the comparison already ran.
pub(crate) fn check(
    rules: &[GateRule],
    matched: &[(&ScenarioAnalysis, &ScenarioAnalysis)],
    tables: &[CompareTable],
    options: &AnalyzeOptions,
) -> Gate {
    let checks = matched
        .iter()
        .flat_map(|(sa, sb)| {
            rules
                .iter()
                .filter_map(move |rule| check_one(rule, sa, sb, tables, options))
        })
        .collect();
    Gate {
        rules: rules.to_vec(),
        checks,
        scenarios: matched.len(),
        alpha: options.alpha,
        confidence: options.confidence,
    }
}

/// One rule on one scenario; `None` when either run lacks the metric there.
/// The change and its p-value are the comparison's own, so the gate and
/// every table say the same.
fn check_one(
    rule: &GateRule,
    sa: &ScenarioAnalysis,
    sb: &ScenarioAnalysis,
    tables: &[CompareTable],
    options: &AnalyzeOptions,
) -> Option<GateCheck> {
    let key = sa.scenario.key.as_str();
    let (a, b) = (sa.metrics.get(&rule.metric)?, sb.metrics.get(&rule.metric)?);
    let comparison = tables
        .iter()
        .find(|t| t.metric == rule.metric)
        .and_then(|t| t.rows.iter().find(|r| r.key == key))
        .and_then(|r| r.comparison.as_ref());
    let change = comparison.and_then(|c| Some((c.ratio?, c.ratio_lo?, c.ratio_hi?)));
    let (outcome, reason) = match (comparison, change) {
        (None, _) => (
            GateOutcome::Undecided,
            "no U test: a run has no values".to_owned(),
        ),
        (Some(c), None) => (GateOutcome::Undecided, no_interval(c, options.confidence)),
        (Some(c), Some(change)) => judge(rule, change, c.p_value, options.alpha),
    };
    Some(GateCheck {
        scenario: key.to_owned(),
        metric: rule.metric,
        rule: rule.text.clone(),
        a_median: a.median,
        b_median: b.median,
        ratio: change.map(|(r, _, _)| r),
        ratio_lo: change.map(|(_, lo, _)| lo),
        ratio_hi: change.map(|(_, _, hi)| hi),
        change_text: comparison
            .filter(|_| change.is_some())
            .map(|c| c.change_text.clone())
            .unwrap_or_default(),
        p_value: comparison.map(|c| c.p_value),
        outcome,
        reason,
    })
}

/// Why a comparison has no interval of B/A to judge.
fn no_interval(c: &MetricComparison, confidence: f64) -> String {
    match c.estimator {
        ChangeEstimator::MedianRatio => {
            "no ratio interval for B/A: a trial value is 0 or below".to_owned()
        }
        ChangeEstimator::HodgesLehmann => {
            let needed = min_samples_for_ratio_ci(confidence).ok().flatten();
            format!(
                "no ratio interval for B/A: {}+{} trials are too few for a {} interval{}",
                c.n_baseline,
                c.n,
                super::warnings::percent(confidence),
                needed.map_or_else(String::new, |n| format!(" (at least {n} a side)"))
            )
        }
    }
}

/// Fails only when the U test rejects and the whole interval of B/A lies
/// on the bad side of the threshold.
fn judge(rule: &GateRule, change: (f64, f64, f64), p: f64, alpha: f64) -> (GateOutcome, String) {
    let (estimate, lo, hi) = change;
    let limit = rule.limit_ratio();
    let (beyond_all, beyond_estimate, side) = if rule.fails_on_drop() {
        (hi < limit, estimate < limit, "below")
    } else {
        (lo > limit, estimate > limit, "above")
    };
    let limit_text = &rule.text;
    let significant = p <= alpha;
    if beyond_all && significant {
        let reason = format!("the interval lies wholly {side} {limit_text} and p ≤ {alpha}");
        return (GateOutcome::Failed, reason);
    }
    let reason = if !beyond_estimate {
        format!("within {limit_text}")
    } else if significant {
        format!("significant, but the interval reaches back within {limit_text}")
    } else {
        format!("beyond {limit_text} but not significant (p={p:.3} > {alpha})")
    };
    (GateOutcome::Passed, reason)
}
