//! Per workload and schedule: throughput with its confidence interval, and
//! the latency percentile spectrum of the merged histograms.

use corobench_model::{Metric, PercentileValue, RunAnalysis};

use super::axes::{Frame, legend, text_width, x_axis, y_axis};
use super::svg::{Scale, Svg, color, linear_ticks, log_ticks, nice_max, nice_step};
use crate::units;

pub(crate) const WIDTH: f64 = 1080.0;
const ROW_PX: f64 = 30.0;
const BAR_PX: f64 = 16.0;

/// Horizontal bars of median req/s, whiskers over the confidence interval
/// and a dot per trial.
pub(crate) fn throughput(analysis: &RunAnalysis, group: &[usize], colors: &[usize]) -> String {
    let rows: Vec<usize> = group
        .iter()
        .copied()
        .filter(|&i| {
            analysis.scenarios[i]
                .metrics
                .contains_key(&Metric::RequestsPerS)
        })
        .collect();
    let label_px = rows
        .iter()
        .map(|&i| text_width(&analysis.scenarios[i].label))
        .fold(80.0, f64::max)
        .min(300.0);
    let frame = Frame {
        left: label_px + 16.0,
        right: WIDTH - 120.0,
        top: 10.0,
        bottom: 10.0 + ROW_PX * rows.len() as f64,
    };
    let highest = rows
        .iter()
        .map(|&i| {
            let s = &analysis.scenarios[i].metrics[&Metric::RequestsPerS];
            s.ci_hi.unwrap_or(s.max).max(s.max)
        })
        .fold(0.0, f64::max);
    let top = nice_max(highest, 6);
    let scale = frame.x_scale_linear(0.0, top);
    let mut svg = Svg::new(WIDTH, frame.bottom + 46.0);
    let ticks: Vec<(f64, String)> = linear_ticks(0.0, top, nice_step(top, 6))
        .into_iter()
        .map(|v| (v, units::tick_si(v)))
        .collect();
    x_axis(
        &mut svg,
        &frame,
        &scale,
        &ticks,
        "requests per second (median of the trials, whiskers: confidence interval, dots: trials)",
    );
    for (row, &i) in rows.iter().enumerate() {
        bar(&mut svg, analysis, i, (row, colors[i]), (&frame, &scale));
    }
    svg.finish("throughput per scenario")
}

fn bar(
    svg: &mut Svg,
    analysis: &RunAnalysis,
    i: usize,
    (row, colour): (usize, usize),
    (frame, scale): (&Frame, &Scale),
) {
    let s = &analysis.scenarios[i];
    let summary = &s.metrics[&Metric::RequestsPerS];
    let middle = frame.top + ROW_PX * (row as f64 + 0.5);
    svg.text((frame.left - 8.0, middle + 4.0), "end", "label", &s.label);
    let width = scale.px(summary.median) - frame.left;
    let tip = format!(
        "{}: median {} req/s, {} confidence interval {}, range {}…{}, n={}",
        s.label,
        units::si(summary.median),
        units::whole_pct(summary.ci_confidence),
        interval_text(summary.ci_lo, summary.ci_hi),
        units::si(summary.min),
        units::si(summary.max),
        summary.n
    );
    svg.rect(
        (frame.left, middle - BAR_PX / 2.0, width, BAR_PX),
        color(colour),
        &tip,
    );
    if let (Some(lo), Some(hi)) = (summary.ci_lo, summary.ci_hi) {
        svg.whisker(middle, scale.px(lo), scale.px(hi), true, "#222");
    }
    for trial in &s.trials {
        if let Some(v) = trial.values.get(&Metric::RequestsPerS) {
            let tip = format!("trial {}: {} req/s", trial.trial_index + 1, units::si(*v));
            svg.circle((scale.px(*v), middle), 2.5, "#222", &tip);
        }
    }
    let end = summary.ci_hi.unwrap_or(summary.max).max(summary.max);
    let text = units::summary(summary, units::si);
    svg.text((scale.px(end) + 8.0, middle + 4.0), "start", "value", &text);
}

/// `15.2k…16.4k`, with ∞ for an open end.
fn interval_text(lo: Option<f64>, hi: Option<f64>) -> String {
    let end = |v: Option<f64>, inf: &str| v.map_or(inf.to_owned(), units::si);
    format!("{}…{}", end(lo, "−∞"), end(hi, "+∞"))
}

/// 1/(1 − p): the x position of percentile p on a "nines" axis.
fn nines(percentile: f64) -> f64 {
    1.0 / (1.0 - percentile / 100.0)
}

/// Latency against percentile, both on log scales: one line per scenario
/// (dashed: open loop measured from the actual send, i.e. uncorrected).
pub(crate) fn spectrum(
    analysis: &RunAnalysis,
    group: &[usize],
    colors: &[usize],
) -> Option<String> {
    let lines: Vec<(usize, &[PercentileValue], bool)> = group
        .iter()
        .filter_map(|&i| analysis.scenarios[i].latency.as_ref().map(|l| (i, l)))
        .flat_map(|(i, l)| {
            let corrected = (i, l.spectrum.as_slice(), false);
            let uncorrected = l.spectrum_uncorrected.as_deref().map(|u| (i, u, true));
            std::iter::once(corrected).chain(uncorrected)
        })
        .filter(|(_, points, _)| !points.is_empty())
        .collect();
    if lines.is_empty() {
        return None;
    }
    let all = || lines.iter().flat_map(|(_, p, _)| p.iter());
    let max_x = all().map(|p| nines(p.percentile)).fold(100.0, f64::max);
    let lo_us = all()
        .map(|p| p.latency_us.max(1) as f64)
        .fold(f64::MAX, f64::min);
    let hi_us = all()
        .map(|p| p.latency_us.max(1) as f64)
        .fold(1.0, f64::max);
    let frame = Frame {
        left: 84.0,
        right: WIDTH - 300.0,
        top: 12.0,
        bottom: 292.0,
    };
    let x = Scale::log(2.0, max_x, frame.left, frame.right);
    let (y_lo, y_hi) = (lo_us / 1.2, hi_us * 1.2);
    let y = Scale::log(y_lo, y_hi, frame.bottom, frame.top);
    let mut svg = Svg::new(WIDTH, frame.bottom + 46.0);
    let x_ticks: Vec<(f64, String)> = [50.0, 90.0, 99.0, 99.9, 99.99, 99.999]
        .into_iter()
        .filter(|p| nines(*p) <= max_x * 1.0001)
        .map(|p| (nines(p), format!("{}%", trim(p))))
        .collect();
    x_axis(
        &mut svg,
        &frame,
        &x,
        &x_ticks,
        "percentile (log scale of 1 / (1 − p): each step right is one more nine)",
    );
    let y_ticks: Vec<(f64, String)> = log_ticks(y_lo, y_hi)
        .into_iter()
        .map(|v| (v, units::tick_latency_us(v)))
        .collect();
    y_axis(&mut svg, &frame, &y, &y_ticks, "latency (log scale)");
    let mut entries = Vec::new();
    for (i, points, dashed) in &lines {
        let label = &analysis.scenarios[*i].label;
        let label = if *dashed {
            format!("{label} (uncorrected)")
        } else {
            label.clone()
        };
        let coords: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (x.px(nines(p.percentile)), y.px(p.latency_us.max(1) as f64)))
            .collect();
        svg.polyline(
            &coords,
            color(colors[*i]),
            *dashed,
            &spectrum_tip(&label, points),
        );
        entries.push((colors[*i], label, *dashed));
    }
    legend(&mut svg, &frame, &entries);
    Some(svg.finish("latency percentile spectrum"))
}

fn spectrum_tip(label: &str, points: &[PercentileValue]) -> String {
    let shown: Vec<String> = points
        .iter()
        .filter(|p| {
            [50.0, 90.0, 99.0, 99.9, 99.99]
                .iter()
                .any(|q| (p.percentile - q).abs() < 1e-6)
        })
        .map(|p| {
            format!(
                "{} {}",
                units::percentile_label(p.percentile),
                units::latency_us(p.latency_us as f64)
            )
        })
        .collect();
    format!("{label}: {}", shown.join(", "))
}

fn trim(p: f64) -> String {
    let text = format!("{p:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}
