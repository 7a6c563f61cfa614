//! `--format csv`: one row per scenario × metric (median, interval, n,
//! extremes, and the comparison with the baseline); `--format csv-trials`:
//! one row per trial × metric, the raw values; and the comparison of two
//! runs, one row per metric × scenario; `--format csv-claims`: one row per
//! published claim with its verdict; `--format csv-capacity`: one row per
//! rate a capacity search tried, with the search's capacity. Numbers are raw (no unit prefixes),
//! with the unit in its own column, so spreadsheets and pandas read them as
//! numbers. An unbounded interval end is an empty cell. Each is a format of
//! its own, so that each loads as one table.

use std::io::{self, Write};

use corobench_model::{
    Better, CapacityComparison, CapacityEstimate, CapacityRate, ClaimExpectation, ClaimMeasurement,
    ClaimScenario, ClaimSide, ClaimVerdict, Metric, MetricComparison, MetricSummary, RunAnalysis,
    RunComparison, ScenarioAnalysis, ScheduleKind, TrialFlag, WarningKind,
};

use crate::capacity;

const SCENARIO_COLUMNS: &str =
    "run,scenario,target,parameters,workload,method,path,schedule,rate_per_s,connections";

/// The per-scenario summary.
pub(crate) fn write_summary(analysis: &RunAnalysis, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{SCENARIO_COLUMNS},metric,unit,better,n,median,ci_lo,ci_hi,ci_confidence,min,max,\
         baseline_scenario,ratio,ratio_lo,ratio_hi,p_value,significant,delta,machine_variation,\
         within_machine_variation"
    )?;
    for (index, s) in analysis.scenarios.iter().enumerate() {
        let comparison = analysis.comparisons.iter().find(|c| c.scenario == index);
        for (metric, summary) in &s.metrics {
            let compared = comparison.and_then(|c| {
                let m = c.metrics.iter().find(|m| m.metric == *metric)?;
                Some((analysis.scenarios[c.baseline].scenario.key.as_str(), m))
            });
            let mut fields = scenario_fields(&analysis.run.id, s);
            fields.extend(metric_fields(*metric));
            fields.extend(summary_fields(Some(summary)));
            fields.extend(comparison_fields(compared));
            fields.extend(machine_fields(analysis, s, *metric, compared.is_some()));
            write_row(out, &fields)?;
        }
    }
    Ok(())
}

/// How much the machine's own speed varied over the run (± a fraction of
/// its median, the same on every row), and for a req/s row compared with
/// the baseline whether the difference lies within it.
fn machine_fields(
    analysis: &RunAnalysis,
    scenario: &ScenarioAnalysis,
    metric: Metric,
    compared: bool,
) -> [String; 2] {
    let Some(machine) = &analysis.machine else {
        return [String::new(), String::new()];
    };
    let variation = machine.server.half_range.max(machine.generator.half_range);
    let within = if compared && metric == Metric::RequestsPerS {
        scenario
            .warnings
            .iter()
            .filter_map(|&i| analysis.warnings.get(i))
            .any(|w| w.kind == WarningKind::WithinMachineVariation)
            .to_string()
    } else {
        String::new()
    };
    [variation.to_string(), within]
}

/// Every trial's value of every metric.
pub(crate) fn write_trials(analysis: &RunAnalysis, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{SCENARIO_COLUMNS},trial,sequence,status,metric,unit,value,probe_server_mb_per_s,\
         probe_generator_mb_per_s,already_running,flags"
    )?;
    for s in &analysis.scenarios {
        for trial in &s.trials {
            let running = trial
                .flags
                .iter()
                .any(|f| matches!(f, TrialFlag::AlreadyRunning { .. }));
            let flags: Vec<&str> = trial.flags.iter().map(TrialFlag::id).collect();
            for (metric, value) in &trial.values {
                let mut fields = scenario_fields(&analysis.run.id, s);
                fields.extend([
                    trial.trial_index.to_string(),
                    trial.sequence.to_string(),
                    trial.status.as_str().to_owned(),
                ]);
                fields.push(metric.id().to_owned());
                fields.push(metric.unit().symbol().to_owned());
                fields.push(value.to_string());
                fields.push(optional(trial.probe.map(|p| p.server_mb_per_s)));
                fields.push(optional(trial.probe.map(|p| p.generator_mb_per_s)));
                fields.push(running.to_string());
                fields.push(flags.join(";"));
                write_row(out, &fields)?;
            }
        }
    }
    Ok(())
}

/// One row per published claim: the claim, both sides as measured, the
/// measured ratio and the verdict with its reason.
pub(crate) fn write_claims(analysis: &RunAnalysis, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "run,claim,says,source,workload,metric,unit,better,\
         a_selector,a_scenario,a_n,a_median,a_generator_bound_trials,\
         b_selector,b_scenario,b_n,b_median,b_generator_bound_trials,\
         published_a,published_b,expects,claimed_ratio,tolerance,band_lo,band_hi,\
         ratio,ratio_lo,ratio_hi,ratio_confidence,p_value,verdict,why"
    )?;
    for (i, verdict) in analysis.claims.iter().enumerate() {
        let claim = &verdict.claim;
        let mut fields = vec![
            analysis.run.id.clone(),
            (i + 1).to_string(),
            claim.says.clone(),
            claim.source.clone(),
            claim.workload.clone().unwrap_or_default(),
        ];
        fields.extend(metric_fields(claim.metric));
        fields.extend(claim_side_fields(&claim.a, verdict.a.as_ref()));
        fields.extend(claim_side_fields(&claim.b, verdict.b.as_ref()));
        fields.push(optional(claim.published.map(|p| p.a)));
        fields.push(optional(claim.published.map(|p| p.b)));
        fields.extend(expectation_fields(verdict));
        let ratio = verdict.ratio.as_ref();
        fields.extend([
            optional(ratio.map(|r| r.estimate)),
            optional(ratio.and_then(|r| r.lo)),
            optional(ratio.and_then(|r| r.hi)),
            optional(ratio.map(|r| r.confidence)),
            optional(verdict.p_value),
            outcome_id(verdict),
            verdict.why.clone(),
        ]);
        write_row(out, &fields)?;
    }
    Ok(())
}

fn claim_side_fields(side: &ClaimSide, measured: Option<&ClaimMeasurement>) -> [String; 5] {
    let scenario = match &side.resolved {
        ClaimScenario::Scenario(key) => key.to_string(),
        ClaimScenario::Unavailable(_) => String::new(),
    };
    [
        side.selector.clone(),
        scenario,
        measured.map_or(String::new(), |m| m.n.to_string()),
        optional(measured.map(|m| m.median)),
        measured.map_or(String::new(), |m| m.generator_bound_trials.to_string()),
    ]
}

/// `ratio` with its figure, tolerance and band, or `a>b` / `a<b`.
fn expectation_fields(verdict: &ClaimVerdict) -> [String; 5] {
    let band = verdict.band;
    match verdict.claim.expectation {
        ClaimExpectation::Ratio { ratio, tolerance } => [
            "ratio".to_owned(),
            ratio.to_string(),
            tolerance.to_string(),
            optional(band.map(|b| b.lo)),
            optional(band.map(|b| b.hi)),
        ],
        ClaimExpectation::Direction { direction } => [
            direction.as_str().to_owned(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ],
    }
}

/// The verdict as JSON names it: `consistent`, `refuted_lower`, ….
fn outcome_id(verdict: &ClaimVerdict) -> String {
    serde_json::to_value(verdict.outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// One row per rate each capacity search tried: its trials, verdict and
/// latency, then the search's capacity and its comparison with the
/// baseline, repeated on every row of the search so that each row stands
/// alone in a spreadsheet filter. A run without a search: the header alone.
pub(crate) fn write_capacity(analysis: &RunAnalysis, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "run,scenario,target,rate_scenario,rate_per_s,achieved_rate_per_s,\
         passed,failed,generator_limited,broken,verdict,\
         p50_us,p50_ci_lo_us,p50_ci_hi_us,p99_us,p99_ci_lo_us,p99_ci_hi_us,\
         p99_9_us,p99_9_ci_lo_us,p99_9_ci_hi_us,\
         capacity_kind,capacity_per_s,capacity_lo_per_s,capacity_hi_per_s,capacity_confidence,\
         passed_below_per_s,failed_above_per_s,monotone,capacity_bound_per_s,generator_limit,\
         baseline_scenario,capacity_ratio,capacity_ratio_lo,capacity_ratio_hi,\
         capacity_p_value,capacity_significant"
    )?;
    let Some(searched) = &analysis.capacity else {
        return Ok(());
    };
    for search in &searched.scenarios {
        let compared = searched.comparisons.iter().find(|c| c.b == search.key);
        for rate in &search.rates {
            let mut fields = vec![
                analysis.run.id.clone(),
                search.key.clone(),
                search.target.clone(),
                capacity::rate_scenario_key(analysis, rate.scenario_index).unwrap_or_default(),
            ];
            fields.extend(rate_fields(rate));
            fields.extend(estimate_fields(&search.estimate));
            fields.extend(capacity_comparison_fields(compared));
            write_row(out, &fields)?;
        }
    }
    Ok(())
}

/// What one rate's trials did, and the latency median with its interval
/// bounds for p50, p99 and p99.9.
fn rate_fields(rate: &CapacityRate) -> Vec<String> {
    let mut fields = vec![
        rate.rate.to_string(),
        optional(rate.achieved_rate),
        rate.passed.to_string(),
        rate.failed.to_string(),
        rate.generator_limited.to_string(),
        rate.broken.to_string(),
        capacity::verdict_id(rate.verdict).to_owned(),
    ];
    for latency in [&rate.p50_us, &rate.p99_us, &rate.p999_us] {
        let latency = latency.as_ref();
        fields.extend([
            optional(latency.map(|s| s.median)),
            optional(latency.and_then(|s| s.ci_lo)),
            optional(latency.and_then(|s| s.ci_hi)),
        ]);
    }
    fields
}

/// The kind; an estimate's value, interval, confidence, the rates tried
/// around it and whether the pass fractions fall steadily; a bound's rate and whether the generator set it.
fn estimate_fields(estimate: &CapacityEstimate) -> Vec<String> {
    let mut estimated = vec![String::new(); 7];
    let (mut bound, mut generator_limit) = (String::new(), String::new());
    match *estimate {
        CapacityEstimate::Estimated {
            estimate,
            lo,
            hi,
            confidence,
            between,
            monotone,
        } => {
            estimated = vec![
                estimate.to_string(),
                lo.to_string(),
                hi.to_string(),
                confidence.to_string(),
                between[0].to_string(),
                between[1].to_string(),
                monotone.to_string(),
            ];
        }
        CapacityEstimate::AtLeast {
            rate,
            generator_limit: limited,
        } => {
            bound = rate.to_string();
            generator_limit = limited.to_string();
        }
        CapacityEstimate::Below { rate } | CapacityEstimate::SingleRate { rate } => {
            bound = rate.to_string();
        }
        CapacityEstimate::NotDecreasing | CapacityEstimate::NoTrials => {}
    }
    let mut fields = vec![capacity::kind_id(estimate).to_owned()];
    fields.extend(estimated);
    fields.extend([bound, generator_limit]);
    fields
}

/// The baseline search and b/a with its interval, p-value and whether it
/// is significant; empty for the baseline and searches with no estimate.
fn capacity_comparison_fields(compared: Option<&CapacityComparison>) -> [String; 6] {
    let Some(c) = compared else {
        return Default::default();
    };
    [
        c.a.clone(),
        c.ratio.to_string(),
        c.lo.to_string(),
        c.hi.to_string(),
        c.p_value.to_string(),
        c.significant.to_string(),
    ]
}

/// Two runs: one row per metric × matched scenario, then a geomean row.
pub(crate) fn write_comparison(comparison: &RunComparison, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "run_a,run_b,metric,unit,better,scenario,a_n,a_median,a_ci_lo,a_ci_hi,b_n,b_median,\
         b_ci_lo,b_ci_hi,ratio,ratio_lo,ratio_hi,p_value,significant,delta"
    )?;
    let runs = [comparison.a.run.id.clone(), comparison.b.run.id.clone()];
    for table in &comparison.tables {
        let mut head = runs.to_vec();
        head.extend(metric_fields(table.metric));
        for row in &table.rows {
            let mut fields = head.clone();
            fields.push(row.key.clone());
            fields.extend(side_fields(row.a.as_ref()));
            fields.extend(side_fields(row.b.as_ref()));
            fields.extend(verdict_fields(row.comparison.as_ref()));
            write_row(out, &fields)?;
        }
        if let Some(g) = &table.geomean {
            let mut fields = head.clone();
            let number = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
            fields.extend(["geomean".to_owned(), String::new(), number(g.a)]);
            fields.extend([String::new(), String::new(), String::new(), number(g.b)]);
            fields.extend([String::new(), String::new(), number(g.ratio)]);
            fields.extend(vec![String::new(); 4]);
            fields.push(g.delta_text.clone().unwrap_or_default());
            write_row(out, &fields)?;
        }
    }
    Ok(())
}

fn scenario_fields(run_id: &str, s: &ScenarioAnalysis) -> Vec<String> {
    let r = &s.scenario;
    let parameters: Vec<String> = r
        .parameters
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let (schedule, rate) = match r.schedule {
        ScheduleKind::Closed => ("closed", String::new()),
        ScheduleKind::Open { rate_per_s } => ("open", rate_per_s.to_string()),
    };
    vec![
        run_id.to_owned(),
        r.key.to_string(),
        r.target.clone(),
        parameters.join(";"),
        r.workload.name.clone(),
        r.workload.method.clone(),
        r.workload.path.clone(),
        schedule.to_owned(),
        rate,
        r.connections.to_string(),
    ]
}

fn metric_fields(metric: Metric) -> [String; 3] {
    let better = match metric.better() {
        Better::Higher => "higher",
        Better::Lower => "lower",
    };
    [
        metric.id().to_owned(),
        metric.unit().symbol().to_owned(),
        better.to_owned(),
    ]
}

fn optional(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

fn summary_fields(s: Option<&MetricSummary>) -> Vec<String> {
    let Some(s) = s else {
        return vec![String::new(); 7];
    };
    vec![
        s.n.to_string(),
        s.median.to_string(),
        optional(s.ci_lo),
        optional(s.ci_hi),
        s.ci_confidence.to_string(),
        s.min.to_string(),
        s.max.to_string(),
    ]
}

fn side_fields(s: Option<&MetricSummary>) -> Vec<String> {
    let Some(s) = s else {
        return vec![String::new(); 4];
    };
    vec![
        s.n.to_string(),
        s.median.to_string(),
        optional(s.ci_lo),
        optional(s.ci_hi),
    ]
}

fn comparison_fields(compared: Option<(&str, &MetricComparison)>) -> Vec<String> {
    let Some((baseline, m)) = compared else {
        return vec![String::new(); 7];
    };
    let mut fields = vec![baseline.to_owned()];
    fields.extend(verdict_fields(Some(m)));
    fields
}

fn verdict_fields(m: Option<&MetricComparison>) -> Vec<String> {
    let Some(m) = m else {
        return vec![String::new(); 6];
    };
    vec![
        optional(m.ratio),
        optional(m.ratio_lo),
        optional(m.ratio_hi),
        m.p_value.to_string(),
        m.significant.to_string(),
        m.delta_text.clone(),
    ]
}

pub(crate) fn write_row(out: &mut dyn Write, fields: &[String]) -> io::Result<()> {
    let quoted: Vec<String> = fields.iter().map(|f| quote(f)).collect();
    writeln!(out, "{}", quoted.join(","))
}

/// RFC 4180: quote a field holding a comma, a quote or a line break.
fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_needed() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
