//! Sweeps: each metric against the swept dimension, one line per series,
//! whiskers over the confidence intervals. One chart per metric; the page
//! shows one at a time, chosen with a select element.

use corobench_model::{Metric, RunAnalysis, Sweep, SweepSeries};

use super::axes::{Frame, legend, x_axis, y_axis};
use super::charts::WIDTH;
use super::svg::{Scale, Svg, color, escape, linear_ticks, nice_max, nice_step};
use crate::units;

/// The select element and one chart per metric that has data, for one sweep.
/// `labels` are the run's scenario labels in colour order: a series named
/// like a scenario keeps that scenario's colour.
pub(crate) fn sweep_section(
    analysis: &RunAnalysis,
    sweep: &Sweep,
    id: &str,
    labels: &[&str],
) -> String {
    let metrics: Vec<Metric> = analysis
        .metrics
        .iter()
        .map(|info| info.id)
        .filter(|m| has_values(analysis, sweep, *m))
        .collect();
    let options: Vec<String> = metrics
        .iter()
        .map(|m| {
            format!(
                r#"<option value="{}">{}</option>"#,
                m.id(),
                escape(m.description())
            )
        })
        .collect();
    let mut html = format!(
        r#"<label class="switch">metric <select data-switch="{id}">{}</select></label>"#,
        options.join("")
    );
    for metric in metrics {
        html.push_str(&format!(
            r#"<div class="switchable" data-group="{id}" data-key="{}">{}</div>"#,
            metric.id(),
            chart(analysis, sweep, metric, labels)
        ));
    }
    for series in &sweep.series {
        if let Some(scalability) = &series.scalability {
            html.push_str(&format!(
                r#"<p class="usl">USL · {}: {}</p>"#,
                escape(&series.label),
                escape(&crate::document::series_line(scalability))
            ));
        }
    }
    html
}

fn has_values(analysis: &RunAnalysis, sweep: &Sweep, metric: Metric) -> bool {
    sweep
        .series
        .iter()
        .flat_map(|s| &s.points)
        .any(|p| analysis.scenarios[p.scenario].metrics.contains_key(&metric))
}

/// How the swept values are laid out along x.
enum Axis {
    Numeric(Scale),
    /// Evenly spaced, in order of first appearance.
    Categories(Vec<String>, Scale),
}

impl Axis {
    fn px(&self, x: &str, x_value: Option<f64>) -> f64 {
        match self {
            Self::Numeric(scale) => scale.px(x_value.unwrap_or(0.0)),
            Self::Categories(names, scale) => {
                let at = names.iter().position(|n| n == x).unwrap_or(0);
                scale.px(at as f64)
            }
        }
    }
}

fn x_axis_for(sweep: &Sweep, frame: &Frame) -> (Axis, Vec<(f64, String)>) {
    let mut values: Vec<(String, Option<f64>)> = Vec::new();
    for p in sweep.series.iter().flat_map(|s| &s.points) {
        if !values.iter().any(|(x, _)| *x == p.x) {
            values.push((p.x.clone(), p.x_value));
        }
    }
    let numbers: Vec<f64> = values.iter().filter_map(|(_, v)| *v).collect();
    let (lo, hi) = numbers
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    if sweep.numeric && lo > 0.0 && hi / lo >= 8.0 {
        // Sweeps usually double their values: a log axis spaces them evenly.
        let scale = Scale::log(lo / 1.25, hi * 1.25, frame.left, frame.right);
        let ticks = values
            .iter()
            .map(|(x, v)| (v.unwrap_or(lo), x.clone()))
            .collect();
        (Axis::Numeric(scale), ticks)
    } else if sweep.numeric && hi > lo {
        let pad = (hi - lo) * 0.08;
        let scale = frame.x_scale_linear(lo - pad, hi + pad);
        let ticks = values
            .iter()
            .map(|(x, v)| (v.unwrap_or(lo), x.clone()))
            .collect();
        (Axis::Numeric(scale), ticks)
    } else {
        let n = values.len().max(1) as f64;
        let scale = frame.x_scale_linear(-0.5, n - 0.5);
        let names: Vec<String> = values.into_iter().map(|(x, _)| x).collect();
        let ticks = names
            .iter()
            .enumerate()
            .map(|(i, x)| (i as f64, x.clone()))
            .collect();
        (Axis::Categories(names, scale), ticks)
    }
}

fn chart(analysis: &RunAnalysis, sweep: &Sweep, metric: Metric, labels: &[&str]) -> String {
    let frame = Frame {
        left: 84.0,
        right: WIDTH - 300.0,
        top: 12.0,
        bottom: 292.0,
    };
    let highest = sweep
        .series
        .iter()
        .flat_map(|s| &s.points)
        .filter_map(|p| analysis.scenarios[p.scenario].metrics.get(&metric))
        .map(|s| s.ci_hi.unwrap_or(s.max).max(s.max))
        .chain(
            sweep
                .series
                .iter()
                .filter_map(|s| fitted_curve(s, metric))
                .flatten()
                .map(|(_, throughput)| throughput),
        )
        .fold(0.0, f64::max);
    let top = nice_max(highest, 5);
    let y = frame.y_scale_linear(0.0, top);
    let (x, x_ticks) = x_axis_for(sweep, &frame);
    let mut svg = Svg::new(WIDTH, frame.bottom + 46.0);
    let x_title = format!("{} ({})", sweep.dimension, sweep.workload);
    let scale_for_ticks = match &x {
        Axis::Numeric(s) | Axis::Categories(_, s) => *s,
    };
    x_axis(&mut svg, &frame, &scale_for_ticks, &x_ticks, &x_title);
    let y_ticks: Vec<(f64, String)> = linear_ticks(0.0, top, nice_step(top, 5))
        .into_iter()
        .map(|v| (v, units::tick(metric, v)))
        .collect();
    y_axis(&mut svg, &frame, &y, &y_ticks, &y_title(metric));
    let mut entries = Vec::new();
    for (k, series) in sweep.series.iter().enumerate() {
        let colour = labels
            .iter()
            .position(|l| *l == series.label)
            .unwrap_or(labels.len() + k);
        let c = color(colour);
        let mut coords = Vec::new();
        for p in &series.points {
            let Some(s) = analysis.scenarios[p.scenario].metrics.get(&metric) else {
                continue;
            };
            let at = (x.px(&p.x, p.x_value), y.px(s.median));
            if let (Some(lo), Some(hi)) = (s.ci_lo, s.ci_hi) {
                svg.whisker(at.0, y.px(lo), y.px(hi), false, c);
            }
            let tip = format!(
                "{} {}={}: {} (n={})",
                series.label,
                sweep.dimension,
                p.x,
                units::summary(s, |v| units::value(metric, v)),
                s.n
            );
            svg.circle(at, 3.5, c, &tip);
            coords.push(at);
        }
        svg.polyline(&coords, c, false, &series.label);
        if let (Some(curve), Axis::Numeric(scale)) = (fitted_curve(series, metric), &x) {
            let drawn: Vec<(f64, f64)> = curve
                .iter()
                .map(|&(n, throughput)| (scale.px(n), y.px(throughput)))
                .collect();
            svg.polyline(&drawn, c, true, &format!("{}: USL fit", series.label));
        }
        entries.push((colour, series.label.clone(), false));
    }
    legend(&mut svg, &frame, &entries);
    svg.finish(&format!("{} against {}", metric.label(), sweep.dimension))
}

/// Points along a series' fitted USL curve, from its smallest to its
/// largest concurrency (evenly spaced on a log scale, as sweeps double),
/// when the chart shows the metric the curve was fitted to.
fn fitted_curve(series: &SweepSeries, metric: Metric) -> Option<Vec<(f64, f64)>> {
    const STEPS: usize = 48;
    let scalability = series.scalability.as_ref().filter(|s| s.metric == metric)?;
    let fit = scalability.fit.as_ref()?;
    let xs: Vec<f64> = series.points.iter().filter_map(|p| p.x_value).collect();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min).max(1.0);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if hi <= lo {
        return None;
    }
    let ratio = hi / lo;
    Some(
        (0..=STEPS)
            .map(|i| {
                let n = lo * ratio.powf(i as f64 / STEPS as f64);
                (n, fit.throughput_at(n))
            })
            .collect(),
    )
}

/// A short axis title: the metric and its unit.
fn y_title(metric: Metric) -> String {
    match metric {
        Metric::RequestsPerS => "req/s (median)".to_owned(),
        Metric::ServerCpuPct => "server CPU (100% = 1 core)".to_owned(),
        Metric::PeakRssBytes => "server peak RSS".to_owned(),
        Metric::ErrorRate => "failed requests".to_owned(),
        Metric::Program(unit) => format!("{} (median)", unit.as_str()),
        latency => format!("{} latency (median)", latency.label()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use corobench_model::SweepPoint;

    fn sweep(values: &[(&str, Option<f64>)], numeric: bool) -> Sweep {
        Sweep {
            workload: "w".to_owned(),
            dimension: "d".to_owned(),
            numeric,
            series: vec![SweepSeries {
                label: "t".to_owned(),
                target: "t".to_owned(),
                points: values
                    .iter()
                    .map(|(x, v)| SweepPoint {
                        x: (*x).to_owned(),
                        x_value: *v,
                        scenario: 0,
                    })
                    .collect(),
                scalability: None,
            }],
        }
    }

    #[test]
    fn doubling_values_get_a_log_axis_and_names_get_categories() {
        let frame = Frame {
            left: 0.0,
            right: 100.0,
            top: 0.0,
            bottom: 100.0,
        };
        let (axis, ticks) = x_axis_for(
            &sweep(&[("4", Some(4.0)), ("64", Some(64.0))], true),
            &frame,
        );
        assert!(matches!(axis, Axis::Numeric(_)));
        assert_eq!(ticks.len(), 2);
        let (axis, _) = x_axis_for(&sweep(&[("on", None), ("off", None)], false), &frame);
        let Axis::Categories(names, _) = axis else {
            panic!("expected categories");
        };
        assert_eq!(names, ["on", "off"]);
    }

    /// The fixture run with a USL fit attached to the go-nethttp series of
    /// the plaintext connections sweep: λ 5k, σ 0.02, κ 0.001.
    fn fitted_analysis() -> RunAnalysis {
        use corobench_model::{FittedValue, Scalability, UslEstimates};
        let mut analysis: RunAnalysis =
            serde_json::from_str(include_str!("../../tests/fixtures/run-analysis.json")).unwrap();
        let value = |estimate: f64, lo: f64, hi: f64| FittedValue {
            estimate,
            lo: Some(lo),
            hi: Some(hi),
        };
        let sweep = analysis
            .sweeps
            .iter_mut()
            .find(|s| s.workload == "plaintext" && s.dimension == "connections")
            .unwrap();
        sweep.series[0].scalability = Some(Scalability {
            metric: Metric::RequestsPerS,
            points: 12,
            fit: Some(UslEstimates {
                lambda: value(5000.0, 4800.0, 5200.0),
                sigma: value(0.02, 0.015, 0.025),
                kappa: value(0.001, 0.0008, 0.0012),
                peak_concurrency: Some(value(31.3, 28.9, 35.4)),
                peak_throughput: Some(value(62_000.0, 60_000.0, 64_000.0)),
                kappa_indistinguishable_from_zero: false,
                confidence: 0.95,
                resamples: 1000,
            }),
            note: None,
        });
        analysis
    }

    #[test]
    fn a_fitted_series_draws_its_curve_over_the_trials() {
        let analysis = fitted_analysis();
        let sweep = analysis
            .sweeps
            .iter()
            .find(|s| s.workload == "plaintext" && s.dimension == "connections")
            .unwrap();
        let html = sweep_section(&analysis, sweep, "sweep-1", &[]);
        let curve: Vec<&str> = html
            .split("<polyline ")
            .filter(|p| p.contains("stroke-dasharray"))
            .map(|p| p.split("</polyline>").next().unwrap_or(p))
            .collect();
        // Only the req/s chart has the curve; the other metrics were not fitted.
        assert_eq!(curve.len(), 1);
        let usl_lines: Vec<&str> = html
            .split(r#"<p class="usl">"#)
            .skip(1)
            .map(|p| p.split("</p>").next().unwrap_or(p))
            .collect();
        insta::assert_snapshot!(
            "sweep_with_usl_curve",
            format!("{}\n\n{}", curve[0], usl_lines.join("\n"))
        );
    }
}
