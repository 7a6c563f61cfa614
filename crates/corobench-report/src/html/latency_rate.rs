//! Latency against offered rate for the capacity searches of one workload:
//! where each search's latency climbs, where it crosses the objectives,
//! which rates passed, and where the capacity lies. Both axes are log
//! scales: searches double their rates, and latency past capacity grows by
//! orders of magnitude.

use corobench_model::{
    CapacityEstimate, CapacityRate, MetricSummary, RateVerdict, ScenarioCapacity, Slo, SloMeasure,
};

use super::axes::{Frame, legend, x_axis, y_axis};
use super::charts::WIDTH;
use super::svg::{DASHED, Scale, Svg, color, log_ticks};
use crate::{capacity, units};

const SLO_STROKE: &str = "#c62828";
/// The line styles and markers of the key, which belong to no search.
const KEY_STROKE: &str = "#555";
const BAND_OPACITY: f64 = 0.12;
const MARKER_PX: f64 = 3.5;
/// The searches' points at one rate are drawn this far apart, so that
/// their whiskers do not hide one another.
const NUDGE_PX: f64 = 5.0;
/// An estimate far outside the rates tried would squeeze them into a
/// corner: the axis reaches at most this factor beyond them.
const REACH: f64 = 4.0;
/// The key's rows: one per search, then a gap, the percentiles, the
/// markers and the band.
const ROW_PX: f64 = 20.0;
/// Latency below 1 µs is not resolved; the log scale needs a floor.
const FLOOR_US: f64 = 1.0;

/// The latency percentiles drawn, each with its own line pattern.
#[derive(Clone, Copy)]
enum Percentile {
    P50,
    P99,
    P999,
}

impl Percentile {
    const ALL: [Self; 3] = [Self::P50, Self::P99, Self::P999];

    fn label(self) -> &'static str {
        match self {
            Self::P50 => "p50",
            Self::P99 => "p99",
            Self::P999 => "p99.9",
        }
    }

    /// Dotted, solid, dashed: the tail grows the further the dashes reach.
    fn pattern(self) -> Option<&'static str> {
        match self {
            Self::P50 => Some("2 3"),
            Self::P99 => None,
            Self::P999 => Some(DASHED),
        }
    }

    fn of(self, rate: &CapacityRate) -> Option<&MetricSummary> {
        match self {
            Self::P50 => rate.p50_us.as_ref(),
            Self::P99 => rate.p99_us.as_ref(),
            Self::P999 => rate.p999_us.as_ref(),
        }
    }
}

/// The plot area and its two scales.
struct Plot {
    frame: Frame,
    x: Scale,
    y: Scale,
}

impl Plot {
    fn at(&self, rate: f64, latency_us: f64) -> (f64, f64) {
        (self.x.px(rate), self.y.px(latency_us.max(FLOOR_US)))
    }

    /// An x position held inside the plot (a band may reach beyond it).
    fn clamped_x(&self, rate: f64) -> f64 {
        self.x.px(rate).clamp(self.frame.left, self.frame.right)
    }
}

/// The chart for these searches (colour i for search i), or nothing when
/// none has a latency to draw.
pub(crate) fn latency_rate_chart(searches: &[&ScenarioCapacity], slos: &[Slo]) -> Option<String> {
    let objectives: Vec<(f64, String)> = slos.iter().filter_map(latency_objective).collect();
    let (x_lo, x_hi) = rate_extent(searches)?;
    let (y_lo, y_hi) = latency_extent(searches, &objectives)?;
    let frame = Frame {
        left: 84.0,
        right: WIDTH - 300.0,
        top: 12.0,
        bottom: 292.0,
    };
    let plot = Plot {
        x: Scale::log(x_lo, x_hi, frame.left, frame.right),
        y: Scale::log(y_lo, y_hi, frame.bottom, frame.top),
        frame,
    };
    let key_bottom = frame.top + ROW_PX * (searches.len() + 9) as f64;
    let mut svg = Svg::new(WIDTH, (frame.bottom + 46.0).max(key_bottom));
    axes(&mut svg, &plot, (x_lo, x_hi), (y_lo, y_hi));
    for (k, search) in searches.iter().enumerate() {
        capacity_band(&mut svg, &plot, search, color(k));
    }
    for (limit_us, text) in &objectives {
        objective_line(&mut svg, &plot, *limit_us, text);
    }
    let middle = (searches.len() as f64 - 1.0) / 2.0;
    for (k, search) in searches.iter().enumerate() {
        let nudge = (k as f64 - middle) * NUDGE_PX;
        draw_search(&mut svg, &plot, search, (color(k), nudge));
    }
    key(&mut svg, &plot.frame, searches);
    Some(svg.finish("latency against offered rate"))
}

/// A latency objective's limit (µs) and its text; none for error budgets.
fn latency_objective(slo: &Slo) -> Option<(f64, String)> {
    match slo.measure {
        SloMeasure::LatencyPercentile { .. } | SloMeasure::LatencyMean => {
            Some((slo.limit, slo.to_string()))
        }
        SloMeasure::Errors => None,
    }
}

/// The rates tried, and the capacities within reach of them, with a margin.
fn rate_extent(searches: &[&ScenarioCapacity]) -> Option<(f64, f64)> {
    let rates = || {
        searches
            .iter()
            .flat_map(|s| &s.rates)
            .map(|r| r.rate)
            .filter(|r| *r > 0.0 && r.is_finite())
    };
    let lowest = rates().fold(f64::INFINITY, f64::min);
    let highest = rates().fold(0.0, f64::max);
    if !lowest.is_finite() {
        return None;
    }
    let capacities = searches.iter().flat_map(|s| match s.estimate {
        CapacityEstimate::Estimated {
            estimate, lo, hi, ..
        } => vec![estimate, lo, hi],
        _ => Vec::new(),
    });
    let (lo, hi) = capacities
        .map(|c| c.clamp(lowest / REACH, highest * REACH))
        .fold((lowest, highest), |(lo, hi), c| (lo.min(c), hi.max(c)));
    Some((lo / 1.25, hi * 1.25))
}

/// Every latency median and interval bound drawn, and the objectives.
fn latency_extent(
    searches: &[&ScenarioCapacity],
    objectives: &[(f64, String)],
) -> Option<(f64, f64)> {
    let summaries = searches
        .iter()
        .flat_map(|s| &s.rates)
        .flat_map(|rate| Percentile::ALL.into_iter().filter_map(|p| p.of(rate)));
    let values: Vec<f64> = summaries
        .flat_map(|s| [Some(s.median), s.ci_lo, s.ci_hi])
        .flatten()
        .chain(objectives.iter().map(|(limit, _)| *limit))
        .filter(|v| v.is_finite())
        .map(|v| v.max(FLOOR_US))
        .collect();
    if values.is_empty() {
        return None;
    }
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    Some((lo / 1.3, hi * 1.3))
}

fn axes(svg: &mut Svg, plot: &Plot, (x_lo, x_hi): (f64, f64), (y_lo, y_hi): (f64, f64)) {
    let x_ticks: Vec<(f64, String)> = log_ticks(x_lo, x_hi)
        .into_iter()
        .map(|v| (v, units::tick_si(v)))
        .collect();
    x_axis(
        svg,
        &plot.frame,
        &plot.x,
        &x_ticks,
        "offered rate, req/s (log scale)",
    );
    let y_ticks: Vec<(f64, String)> = log_ticks(y_lo, y_hi)
        .into_iter()
        .map(|v| (v, units::tick_latency_us(v)))
        .collect();
    y_axis(svg, &plot.frame, &plot.y, &y_ticks, "latency (log scale)");
}

/// Where the capacity lies: its interval with a line at the estimate, or
/// everything above (≥) or below (<) the bound the search found.
fn capacity_band(svg: &mut Svg, plot: &Plot, search: &ScenarioCapacity, colour: &str) {
    let (from, to, estimate) = match search.estimate {
        CapacityEstimate::Estimated {
            estimate, lo, hi, ..
        } => (lo, hi, Some(estimate)),
        CapacityEstimate::AtLeast { rate, .. } => (rate, f64::INFINITY, None),
        CapacityEstimate::Below { rate } => (0.0, rate, None),
        CapacityEstimate::SingleRate { .. }
        | CapacityEstimate::NotDecreasing
        | CapacityEstimate::NoTrials => return,
    };
    let tip = format!(
        "{}: capacity {}",
        search.key,
        capacity::summary_text(&search.estimate)
    );
    let (top, bottom) = (plot.frame.top, plot.frame.bottom);
    let (x1, x2) = (plot.clamped_x(from), plot.clamped_x(to));
    svg.shade((x1, top, x2 - x1, bottom - top), colour, BAND_OPACITY, &tip);
    let at = estimate.map(|e| plot.x.px(e));
    if let Some(x) = at.filter(|x| (plot.frame.left..=plot.frame.right).contains(x)) {
        svg.polyline(&[(x, top), (x, bottom)], colour, false, &tip);
    }
}

/// A latency objective as a dashed line across the plot, labelled.
fn objective_line(svg: &mut Svg, plot: &Plot, limit_us: f64, text: &str) {
    let y = plot.y.px(limit_us.max(FLOOR_US));
    let (left, right) = (plot.frame.left, plot.frame.right);
    let tip = format!("objective {text}");
    svg.patterned_polyline(&[(left, y), (right, y)], SLO_STROKE, Some(DASHED), &tip);
    svg.text((right - 4.0, y - 5.0), "end", "value", text);
}

/// One search: a line per percentile with whiskers, then a marker per
/// point showing the rate's verdict (drawn last, so lines do not cross them).
fn draw_search(
    svg: &mut Svg,
    plot: &Plot,
    search: &ScenarioCapacity,
    (colour, nudge): (&str, f64),
) {
    let mut markers = Vec::new();
    for percentile in Percentile::ALL {
        let mut line = Vec::new();
        for rate in &search.rates {
            let Some(summary) = percentile.of(rate) else {
                continue;
            };
            let (x, y) = plot.at(rate.rate, summary.median);
            let x = x + nudge;
            if let (Some(lo), Some(hi)) = (summary.ci_lo, summary.ci_hi) {
                let (_, y_lo) = plot.at(rate.rate, lo);
                let (_, y_hi) = plot.at(rate.rate, hi);
                svg.whisker(x, y_lo, y_hi, false, colour);
            }
            line.push((x, y));
            let tip = point_tip(search, rate, percentile, summary);
            markers.push(((x, y), rate.verdict, tip));
        }
        let tip = format!("{}: {}", search.key, percentile.label());
        svg.patterned_polyline(&line, colour, percentile.pattern(), &tip);
    }
    for (at, verdict, tip) in markers {
        marker(svg, at, verdict, colour, &tip);
    }
}

/// Filled: passed; hollow: failed; a square: not judged.
fn marker(svg: &mut Svg, at: (f64, f64), verdict: RateVerdict, colour: &str, tip: &str) {
    match verdict {
        RateVerdict::Pass => svg.circle(at, MARKER_PX, colour, tip),
        RateVerdict::Fail => svg.ring(at, MARKER_PX, colour, tip),
        RateVerdict::GeneratorLimit | RateVerdict::Undecided => {
            svg.square(at, MARKER_PX, colour, tip);
        }
    }
}

/// `go-nethttp/json/c=16 at 3.00k req/s (achieved 2.99k): p99 2.60ms
/// [2.00ms, 3.40ms]; passed: 6 passed, 0 failed`.
fn point_tip(
    search: &ScenarioCapacity,
    rate: &CapacityRate,
    percentile: Percentile,
    summary: &MetricSummary,
) -> String {
    let achieved = rate
        .achieved_rate
        .map(|a| format!(" (achieved {})", units::si3(a)))
        .unwrap_or_default();
    let bound = |v: Option<f64>| v.map_or_else(|| "∞".to_owned(), units::latency_us);
    let verdict = match rate.verdict {
        RateVerdict::Pass => "passed",
        RateVerdict::Fail => "failed",
        RateVerdict::GeneratorLimit => "not judged, generator limit",
        RateVerdict::Undecided => "undecided",
    };
    let mut trials = format!("{} passed, {} failed", rate.passed, rate.failed);
    if rate.generator_limited > 0 {
        trials.push_str(&format!(", {} generator-limited", rate.generator_limited));
    }
    if rate.broken > 0 {
        trials.push_str(&format!(", {} broken", rate.broken));
    }
    format!(
        "{} at {} req/s{achieved}: {} {} [{}, {}]; {verdict}: {trials}",
        search.key,
        units::si3(rate.rate),
        percentile.label(),
        units::latency_us(summary.median),
        bound(summary.ci_lo),
        bound(summary.ci_hi),
    )
}

/// The searches' colours, then what the line patterns, markers and bands
/// mean.
fn key(svg: &mut Svg, frame: &Frame, searches: &[&ScenarioCapacity]) {
    let entries: Vec<(usize, String, bool)> = searches
        .iter()
        .enumerate()
        .map(|(k, s)| (k, s.key.clone(), false))
        .collect();
    legend(svg, frame, &entries);
    let x = frame.right + 18.0;
    let mut y = frame.top + 6.0 + ROW_PX * (searches.len() as f64 + 0.5);
    let mut row = |svg: &mut Svg, label: &str, draw: &dyn Fn(&mut Svg, f64)| {
        draw(svg, y);
        svg.text((x + 28.0, y + 4.0), "start", "legend", label);
        y += ROW_PX;
    };
    for p in Percentile::ALL {
        row(svg, p.label(), &|svg, y| {
            svg.patterned_polyline(&[(x, y), (x + 22.0, y)], KEY_STROKE, p.pattern(), p.label());
        });
    }
    for (verdict, label) in [
        (RateVerdict::Pass, "rate passed"),
        (RateVerdict::Fail, "rate failed"),
        (RateVerdict::GeneratorLimit, "rate not judged"),
    ] {
        row(svg, label, &|svg, y| {
            marker(svg, (x + 11.0, y), verdict, KEY_STROKE, label);
        });
    }
    row(svg, "where the capacity lies", &|svg, y| {
        let tip = "where the capacity lies";
        svg.shade(
            (x, y - 6.0, 22.0, 12.0),
            KEY_STROKE,
            BAND_OPACITY * 2.0,
            tip,
        );
    });
}
