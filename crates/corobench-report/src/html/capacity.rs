//! The capacity section: each search's capacity with its interval and how
//! the search ended, the comparisons with the baseline target, and per
//! workload a chart of latency against the offered rate.

use std::fmt::Write as _;

use corobench_model::{
    CapacityAnalysis, CapacityComparison, CapacityEstimate, RunAnalysis, ScenarioCapacity,
};

use super::latency_rate::latency_rate_chart;
use super::svg::escape;
use super::tables;
use crate::capacity::{self, estimate_text, interval_text, ratio_text, search_ending};
use crate::document::{Align, Cell, Grid, Tone};
use crate::units;

/// The section, or nothing for a run that searched no capacity.
pub(crate) fn capacity_section(analysis: &RunAnalysis) -> Option<String> {
    let searched = analysis.capacity.as_ref()?;
    let mut html = String::new();
    let objectives: Vec<String> = searched
        .settings
        .slos
        .iter()
        .map(ToString::to_string)
        .collect();
    explained(
        &mut html,
        r#"<h2 id="capacity">Capacity</h2>"#,
        &format!(
            "The highest offered rate each scenario serves within its objectives ({}): the rate \
             at which a trial passes half the time: every judged trial's pass or fail, fitted as \
             a pass fraction that never rises with the rate, falls through one half between two \
             rates tried; its bootstrap interval keeps the search's resolution. Every rate tried \
             is also a scenario of its own in the tables below.",
            objectives.join(", ")
        ),
    );
    html.push_str(&tables::table(&searches_grid(searched)));
    if !searched.comparisons.is_empty() {
        explained(
            &mut html,
            "<h3>Against the baseline</h3>",
            &format!(
                "Each capacity over the baseline target's for the same workload and connections, \
                 with its interval; ~ when the bootstrap p-value is above {}.",
                analysis.settings.alpha
            ),
        );
        html.push_str(&tables::table(&comparisons_grid(&searched.comparisons)));
    }
    charts(&mut html, analysis, searched);
    Some(html)
}

fn explained(html: &mut String, heading: &str, explain: &str) {
    let _ = write!(
        html,
        r#"{heading}<p class="explain">{}</p>"#,
        escape(explain)
    );
}

const CHARTS_EXPLAINED: &str = "Per workload, latency against the offered rate (log scales): the median over each \
     rate's trials of p50 (dotted), p99 (solid) and p99.9 (dashed), whiskers over their \
     confidence intervals. Filled markers: the rate passed; hollow: it failed; squares: not \
     judged (the generator could not offer the rate, or too few trials decided). Red dashed \
     lines: the latency objectives. Shaded: where the capacity lies (its interval with a \
     line at the estimate, or everything beyond a bound). The searches' points at one rate \
     are drawn a few pixels apart so that their whiskers stay visible.";

fn charts(html: &mut String, analysis: &RunAnalysis, searched: &CapacityAnalysis) {
    let _ = write!(
        html,
        r#"<p class="explain">{}</p>"#,
        escape(CHARTS_EXPLAINED)
    );
    for (workload, searches) in by_workload(analysis, searched) {
        if let Some(chart) = latency_rate_chart(&searches, &searched.settings.slos) {
            let _ = write!(
                html,
                "<h3>{} · latency against offered rate</h3>{chart}",
                escape(&workload)
            );
        }
    }
}

/// The searches grouped by workload, in order of first appearance; a
/// search whose scenarios the run lacks stands under its own key.
fn by_workload<'a>(
    analysis: &RunAnalysis,
    searched: &'a CapacityAnalysis,
) -> Vec<(String, Vec<&'a ScenarioCapacity>)> {
    let mut groups: Vec<(String, Vec<&ScenarioCapacity>)> = Vec::new();
    for search in &searched.scenarios {
        let workload = capacity::first_scenario(analysis, search)
            .map_or_else(|| search.key.clone(), |s| s.scenario.workload.name.clone());
        match groups.iter_mut().find(|(w, _)| *w == workload) {
            Some((_, members)) => members.push(search),
            None => groups.push((workload, vec![search])),
        }
    }
    groups
}

/// One row per search.
fn searches_grid(searched: &CapacityAnalysis) -> Grid {
    use Align::{Left, Right};
    let mut grid = Grid::new(&[
        ("scenario", Left),
        ("rates tried", Left),
        ("capacity", Right),
        ("interval", Left),
        ("how the search ended", Left),
    ]);
    for search in &searched.scenarios {
        let ending_tone = if is_clean_estimate(&search.estimate) {
            Tone::Plain
        } else {
            Tone::Warning
        };
        grid.rows.push(vec![
            Cell::plain(&search.key),
            Cell::plain(rates_tried(search)),
            Cell::plain(estimate_text(&search.estimate)),
            Cell::plain(interval_text(&search.estimate)),
            Cell::toned(search_ending(search), ending_tone),
        ]);
    }
    grid
}

/// An estimate from pass fractions that fall steadily with the rate: the one ending that needs no second look.
fn is_clean_estimate(estimate: &CapacityEstimate) -> bool {
    matches!(estimate, CapacityEstimate::Estimated { monotone: true, .. })
}

/// `4, from 1.50k to 6.00k req/s`.
fn rates_tried(search: &ScenarioCapacity) -> String {
    match (search.rates.first(), search.rates.last()) {
        (Some(lowest), Some(highest)) if search.rates.len() > 1 => format!(
            "{}, from {} to {} req/s",
            search.rates.len(),
            units::si3(lowest.rate),
            units::si3(highest.rate)
        ),
        (Some(only), _) => format!("1, at {} req/s", units::si3(only.rate)),
        _ => "none".to_owned(),
    }
}

/// One row per search compared with the baseline's.
fn comparisons_grid(comparisons: &[CapacityComparison]) -> Grid {
    use Align::{Left, Right};
    let mut grid = Grid::new(&[
        ("baseline", Left),
        ("scenario", Left),
        ("capacity ratio", Right),
        ("p", Right),
        ("verdict", Left),
    ]);
    for c in comparisons {
        let (verdict, tone) = match (c.significant, c.ratio > 1.0) {
            (false, _) => ("~", Tone::Plain),
            (true, true) => ("higher", Tone::Improved),
            (true, false) => ("lower", Tone::Regressed),
        };
        grid.rows.push(vec![
            Cell::plain(&c.a),
            Cell::plain(&c.b),
            Cell::toned(ratio_text(c), tone),
            Cell::plain(format!("{:.3}", c.p_value)),
            Cell::toned(verdict, tone),
        ]);
    }
    grid
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture run with the hand-made capacity analysis of
    /// tests/fixtures/capacity.json attached: searches of json-open that
    /// end estimated (twice), at the generator's limit and below the
    /// lowest rate.
    fn analysis_with_capacity() -> RunAnalysis {
        let mut analysis: RunAnalysis =
            serde_json::from_str(include_str!("../../tests/fixtures/run-analysis.json")).unwrap();
        analysis.capacity =
            Some(serde_json::from_str(include_str!("../../tests/fixtures/capacity.json")).unwrap());
        analysis
    }

    #[test]
    fn a_run_without_a_search_has_no_section() {
        let mut analysis = analysis_with_capacity();
        analysis.capacity = None;
        assert!(capacity_section(&analysis).is_none());
    }

    #[test]
    fn the_tables_say_how_each_search_ended() {
        let html = capacity_section(&analysis_with_capacity()).unwrap();
        for text in [
            "4.70k req/s",
            "[4.15k, 5.60k] 95%",
            "≥ 12.0k req/s (generator limit)",
            "&lt; 375 req/s",
            "4, from 1.50k to 6.00k req/s",
            "0.50× [0.41, 0.62]",
        ] {
            assert!(html.contains(text), "{text}");
        }
        assert_eq!(html.matches(r#"class="chart""#).count(), 1, "one workload");
    }

    #[test]
    fn the_chart_draws_objectives_verdicts_and_capacities() {
        let analysis = analysis_with_capacity();
        let html = capacity_section(&analysis).unwrap();
        let chart = &html[html.find("<svg").unwrap()..];
        insta::assert_snapshot!("capacity_latency_against_rate", chart.replace("><", ">\n<"));
    }
}
