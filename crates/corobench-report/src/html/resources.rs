//! The target's CPU and memory over one trial's measured window: for each
//! scenario its representative trial (the one nearest the median req/s),
//! chosen in a select element.

use corobench_model::{ResourceSample, RunAnalysis, ScenarioAnalysis, TrialAnalysis};

use super::axes::{Frame, legend, x_axis, y_axis};
use super::charts::WIDTH;
use super::svg::{Svg, color, escape, linear_ticks, nice_max, nice_step};
use crate::units;

/// A chart draws at most this many points; longer series are thinned evenly.
const MAX_POINTS: usize = 600;
const GROUP: &str = "resources";

/// The select element and one chart per scenario whose representative
/// trial has a resource series.
pub(crate) fn resources_section(analysis: &RunAnalysis) -> Option<String> {
    let mut options = String::new();
    let mut charts = String::new();
    for s in &analysis.scenarios {
        let Some(trial) = representative(s) else {
            continue;
        };
        let key = format!("s{}", s.scenario.index);
        let name = format!("{} · trial {}", s.scenario.key, trial.trial_index + 1);
        options.push_str(&format!(
            r#"<option value="{key}">{}</option>"#,
            escape(&name)
        ));
        charts.push_str(&format!(
            r#"<div class="switchable" data-group="{GROUP}" data-key="{key}">{}</div>"#,
            chart(&trial.resource_series, &name)
        ));
    }
    if charts.is_empty() {
        return None;
    }
    Some(format!(
        r#"<label class="switch">scenario <select data-switch="{GROUP}">{options}</select></label>{charts}"#
    ))
}

/// The trial nearest the median req/s, if it was sampled.
fn representative(s: &ScenarioAnalysis) -> Option<&TrialAnalysis> {
    let index = s.representative_trial?;
    s.trials
        .iter()
        .find(|t| t.trial_index == index)
        .filter(|t| t.resource_series.len() > 1)
}

fn thinned(samples: &[ResourceSample]) -> Vec<&ResourceSample> {
    let stride = samples.len().div_ceil(MAX_POINTS).max(1);
    samples.iter().step_by(stride).collect()
}

/// CPU (total and system) above, resident memory below, on one time axis.
fn chart(samples: &[ResourceSample], title: &str) -> String {
    let points = thinned(samples);
    let seconds = |s: &ResourceSample| s.t_ms as f64 / 1000.0;
    let end_s = points.iter().map(|s| seconds(s)).fold(0.0, f64::max);
    let cpu_top = nice_max(
        points
            .iter()
            .map(|s| s.cpu_user_pct + s.cpu_system_pct)
            .fold(0.0, f64::max),
        4,
    );
    let mib = |s: &ResourceSample| s.rss_bytes as f64 / (1024.0 * 1024.0);
    let rss_top = nice_max(points.iter().map(|s| mib(s)).fold(0.0, f64::max), 4);
    let cpu_frame = Frame {
        left: 84.0,
        right: WIDTH - 300.0,
        top: 28.0,
        bottom: 168.0,
    };
    let rss_frame = Frame {
        top: 214.0,
        bottom: 354.0,
        ..cpu_frame
    };
    let mut svg = Svg::new(WIDTH, rss_frame.bottom + 46.0);
    svg.text((cpu_frame.left, 16.0), "start", "chart-title", title);
    let x = cpu_frame.x_scale_linear(0.0, end_s.max(0.1));
    let x_ticks: Vec<(f64, String)> = linear_ticks(0.0, end_s, nice_step(end_s.max(0.1), 8))
        .into_iter()
        .map(|v| (v, format!("{}s", units::trimmed(v))))
        .collect();
    x_axis(&mut svg, &cpu_frame, &x, &x_ticks, "");
    x_axis(
        &mut svg,
        &rss_frame,
        &x,
        &x_ticks,
        "seconds into the measured window",
    );
    let cpu = cpu_frame.y_scale_linear(0.0, cpu_top);
    let cpu_ticks: Vec<(f64, String)> = linear_ticks(0.0, cpu_top, nice_step(cpu_top, 4))
        .into_iter()
        .map(|v| (v, format!("{}%", units::trimmed(v))))
        .collect();
    y_axis(&mut svg, &cpu_frame, &cpu, &cpu_ticks, "CPU");
    let total: Vec<(f64, f64)> = points
        .iter()
        .map(|s| (x.px(seconds(s)), cpu.px(s.cpu_user_pct + s.cpu_system_pct)))
        .collect();
    let system: Vec<(f64, f64)> = points
        .iter()
        .map(|s| (x.px(seconds(s)), cpu.px(s.cpu_system_pct)))
        .collect();
    svg.polyline(&total, color(0), false, "CPU, user + system");
    svg.polyline(&system, color(1), true, "CPU, system");
    let rss = rss_frame.y_scale_linear(0.0, rss_top);
    let rss_ticks: Vec<(f64, String)> = linear_ticks(0.0, rss_top, nice_step(rss_top, 4))
        .into_iter()
        .map(|v| (v, format!("{} MiB", units::trimmed(v))))
        .collect();
    y_axis(&mut svg, &rss_frame, &rss, &rss_ticks, "memory");
    let memory: Vec<(f64, f64)> = points
        .iter()
        .map(|s| (x.px(seconds(s)), rss.px(mib(s))))
        .collect();
    svg.polyline(&memory, color(2), false, "resident memory");
    let entries = [
        (0, "CPU, user + system (100% = one core)".to_owned(), false),
        (1, "CPU, system".to_owned(), true),
        (2, "resident memory (whole process tree)".to_owned(), false),
    ];
    legend(&mut svg, &cpu_frame, &entries);
    svg.finish(&format!("CPU and memory of {title}"))
}
