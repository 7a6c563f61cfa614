//! The published claims: the table every report shows, and per claim a
//! small chart of the measured ratio's interval against the claimed ratio
//! and its band, on a log scale (a ratio of 2 and one of ½ lie as far from
//! 1 either way).

use std::fmt::Write as _;

use corobench_model::{ClaimExpectation, ClaimOutcome, ClaimVerdict, RunAnalysis};

use super::axes::{Frame, x_axis};
use super::svg::{Scale, Svg, escape, log_ticks};
use super::tables;
use crate::document::claims_grid;

const WIDTH: f64 = 760.0;
/// The measured interval's row, inside the band's height.
const MIDDLE: f64 = 40.0;
/// How far the axis reaches beyond the figures drawn, as a factor.
const MARGIN: f64 = 1.25;
const BAND_FILL: &str = "#dcefdc";
const CLAIMED_STROKE: &str = "#1a7f37";

/// The section, or nothing for a run without claims.
pub(crate) fn claims_section(analysis: &RunAnalysis) -> Option<String> {
    if analysis.claims.is_empty() {
        return None;
    }
    let mut html = String::new();
    let confidence = crate::units::whole_pct(analysis.settings.confidence);
    let _ = write!(
        html,
        r#"<h2 id="claims">Published claims</h2><p class="explain">{}</p>"#,
        escape(&format!(
            "What each claim says of a/b against what this run measured: the Hodges–Lehmann \
             ratio of the trials with its {confidence} interval (Moses). In each chart the green \
             band is what the claim allows (its ratio and tolerance, dashed: its ratio), the \
             whisker the measured interval and the dot the measured ratio; log scale."
        ))
    );
    html.push_str(&tables::table(&claims_grid(analysis)));
    for (i, verdict) in analysis.claims.iter().enumerate() {
        if let Some(chart) = chart(verdict) {
            let _ = write!(
                html,
                "<h3>{}. {}</h3>{chart}",
                i + 1,
                escape(&verdict.claim.says)
            );
        }
    }
    Some(html)
}

/// The figures a claim's chart places: what was claimed, what was measured.
fn extent(verdict: &ClaimVerdict) -> Option<(f64, f64)> {
    let ratio = verdict.ratio.as_ref()?;
    let mut values = vec![ratio.estimate];
    values.extend(ratio.lo);
    values.extend(ratio.hi);
    match &verdict.band {
        Some(band) => values.extend([band.lo, band.hi]),
        // A direction claim is about which side of 1 the ratio lies.
        None => values.push(1.0),
    }
    let positive = || values.iter().copied().filter(|v| *v > 0.0 && v.is_finite());
    let lo = positive().fold(f64::INFINITY, f64::min);
    let hi = positive().fold(0.0, f64::max);
    (lo.is_finite() && hi > 0.0).then(|| (lo / MARGIN, hi * MARGIN))
}

fn chart(verdict: &ClaimVerdict) -> Option<String> {
    let ratio = verdict.ratio.as_ref()?;
    let (lo, hi) = extent(verdict)?;
    let frame = Frame {
        left: 24.0,
        right: WIDTH - 24.0,
        top: 22.0,
        bottom: 58.0,
    };
    let scale = Scale::log(lo, hi, frame.left, frame.right);
    let mut svg = Svg::new(WIDTH, frame.bottom + 44.0);
    let ticks: Vec<(f64, String)> = log_ticks(lo, hi)
        .into_iter()
        .map(|v| (v, format!("{}×", crate::units::trimmed(v))))
        .collect();
    x_axis(&mut svg, &frame, &scale, &ticks, "a/b (log scale)");
    let top_bottom = (frame.top, frame.bottom);
    match (verdict.band, verdict.claim.expectation) {
        (Some(band), ClaimExpectation::Ratio { ratio: claimed, .. }) => {
            let (x1, x2) = (scale.px(band.lo), scale.px(band.hi));
            let tip = format!("claimed {}", verdict.claimed_text);
            svg.rect(
                (x1, frame.top, x2 - x1, frame.bottom - frame.top),
                BAND_FILL,
                &tip,
            );
            vertical(&mut svg, scale.px(claimed), top_bottom, &tip);
        }
        _ => vertical(&mut svg, scale.px(1.0), top_bottom, "a = b"),
    }
    let stroke = outcome_color(verdict.outcome);
    if let (Some(lo), Some(hi)) = (ratio.lo, ratio.hi) {
        svg.whisker(MIDDLE, scale.px(lo), scale.px(hi), true, stroke);
    }
    let tip = format!("measured {}", verdict.ratio_text);
    svg.circle((scale.px(ratio.estimate), MIDDLE), 4.0, stroke, &tip);
    let caption = format!(
        "measured {} · claimed {} · {}",
        verdict.ratio_text, verdict.claimed_text, verdict.verdict_text
    );
    svg.text((frame.left, 14.0), "start", "value", &caption);
    Some(svg.finish("measured ratio against the claim"))
}

/// A dashed vertical line across the plot: the claimed ratio, or 1.
fn vertical(svg: &mut Svg, x: f64, (top, bottom): (f64, f64), tip: &str) {
    svg.polyline(&[(x, top), (x, bottom)], CLAIMED_STROKE, true, tip);
}

fn outcome_color(outcome: ClaimOutcome) -> &'static str {
    match outcome {
        ClaimOutcome::Consistent => "#1a7f37",
        ClaimOutcome::RefutedLower | ClaimOutcome::RefutedHigher => "#c62828",
        ClaimOutcome::Inconclusive | ClaimOutcome::NotMeasured => "#9a6700",
    }
}
