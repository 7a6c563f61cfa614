//! `--format gobench`: the Go benchmark format, so `benchstat` reads a run
//! directly. One result line per `ok` trial, every metric on it; config
//! lines carry the provenance; `Unit` lines say which direction is better.
//!
//! Names: `Benchmark<Workload>/target=<target>[,<own parameters>]/<shared
//! parameters>/c=<connections>`. A parameter the baseline target also has
//! is a name part of its own, so `benchstat -col /target FILE` puts each
//! target in a column and pairs rows exactly as `corobench report` pairs
//! scenarios with the baseline; parameters only one target has travel with
//! its column label. The baseline target's lines come first, because
//! benchstat takes the first column it sees as the baseline.
//!
//! After the capacity, memory per connection (idle workloads): a comment
//! per fit with its interval, and the slope as one
//! `BenchmarkMemoryPerConnection/…` line in `B/conn`; last, comments name
//! the profiled scenarios and how to draw their flame graphs.
//!
//! A capacity search follows the load scenarios: comments give every search's capacity
//! with its interval or why there is none, and each estimated capacity is
//! one `BenchmarkCapacity<Workload>/…` line in req/s, named as its rates'
//! scenarios are without the rate.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use corobench_model::{
    CapacityAnalysis, CapacityEstimate, Metric, PoolFigure, RunAnalysis, ScenarioAnalysis,
    ScheduleKind, TlsFigure, TrialStatus,
};

use crate::capacity;

/// Our unit for each metric, in the Go convention (`ns` and `B` in the
/// numerator are tidied by benchstat to seconds and bytes).
fn unit(metric: Metric) -> &'static str {
    match metric {
        Metric::RequestsPerS => "req/s",
        Metric::LatencyMeanUs => "mean-ns/op",
        Metric::LatencyP50Us => "p50-ns/op",
        Metric::LatencyP99Us => "p99-ns/op",
        Metric::LatencyP999Us => "p99.9-ns/op",
        Metric::ServerCpuPct => "server-cpu-%",
        Metric::PeakRssBytes => "peak-rss-B",
        Metric::ErrorRate => "error-ratio",
        Metric::PerRequest(cost) => cost.gobench_unit(),
        Metric::Pool(PoolFigure::Reuse) => "pool-reuse-ratio",
        Metric::Pool(PoolFigure::Waits) => "pool-waits-ratio",
        Metric::Pool(PoolFigure::AcquireWait) => "pool-wait-ns/op",
        Metric::Tls(figure) => tls_unit(figure),
        // The program's own unit, as it printed it.
        Metric::Program(unit) => unit.as_str(),
    }
}

/// A TLS figure's unit: times per connection, shares as ratios.
fn tls_unit(figure: TlsFigure) -> &'static str {
    match figure {
        TlsFigure::HandshakeP50 => "tls-handshake-p50-ns/conn",
        TlsFigure::HandshakeP99 => "tls-handshake-p99-ns/conn",
        TlsFigure::ConnectP50 => "tls-connect-p50-ns/conn",
        TlsFigure::ConnectP99 => "tls-connect-p99-ns/conn",
        TlsFigure::Resumed => "tls-resumed-ratio",
        TlsFigure::HandshakeErrors => "tls-handshake-error-ratio",
    }
}

/// Our value in that unit: latencies go from µs to ns.
fn scaled(metric: Metric, value: f64) -> f64 {
    match metric.unit() {
        corobench_model::MetricUnit::Microseconds => value * 1e3,
        _ => value,
    }
}

/// Writes the whole run in the Go benchmark format.
pub(crate) fn write(analysis: &RunAnalysis, out: &mut dyn Write) -> io::Result<()> {
    write_header(analysis, out)?;
    let names = Names::new(analysis);
    for index in names.order(analysis) {
        let s = &analysis.scenarios[index];
        let name = names.name(s);
        // Comment lines are ignored by benchstat; this one ties the name to the scenario.
        writeln!(out, "# {}", s.scenario.key)?;
        for trial in s.trials.iter().filter(|t| t.status == TrialStatus::Ok) {
            // One line is one sample; benchstat ignores the iteration count.
            let mut line = format!("Benchmark{name} 1");
            for (metric, value) in &trial.values {
                line.push_str(&format!(" {} {}", scaled(*metric, *value), unit(*metric)));
            }
            writeln!(out, "{line}")?;
        }
    }
    if let Some(searched) = &analysis.capacity {
        write_capacity(analysis, searched, &names, out)?;
    }
    write_memory_and_profiles(analysis, out)
}

/// Each fit of memory per connection as a comment with its interval, and
/// its slope as one sample in bytes per connection (`B/conn`); then the
/// profiles (comments: which scenarios have one, and how to draw it).
fn write_memory_and_profiles(analysis: &RunAnalysis, out: &mut dyn Write) -> io::Result<()> {
    for block in crate::document::profile_blocks(analysis) {
        if let crate::document::Block::Heading(text) | crate::document::Block::Line(text) = block {
            writeln!(out, "# {text}")?;
        }
    }
    for fit in &analysis.memory_per_connection {
        writeln!(
            out,
            "# memory per connection: {}",
            crate::document::memory_line(fit)
        )?;
        if let Some(slope) = fit.bytes_per_connection {
            writeln!(
                out,
                "BenchmarkMemoryPerConnection/workload={}/target={} {} {slope} B/conn",
                fit.workload,
                fit.label.replace(' ', ","),
                fit.trials
            )?;
        }
    }
    Ok(())
}

/// Each search's capacity as a comment, and an estimated capacity as one
/// sample (benchstat shows a single sample without an interval, so the
/// comment carries it). The baseline target's searches come first, as its
/// scenarios do.
fn write_capacity(
    analysis: &RunAnalysis,
    searched: &CapacityAnalysis,
    names: &Names,
    out: &mut dyn Write,
) -> io::Result<()> {
    let objectives: Vec<String> = searched
        .settings
        .slos
        .iter()
        .map(ToString::to_string)
        .collect();
    writeln!(
        out,
        "# capacity: the highest rate that meets {}",
        objectives.join(", ")
    )?;
    let baseline = names.baseline.as_deref();
    let (first, rest): (Vec<_>, Vec<_>) = searched
        .scenarios
        .iter()
        .partition(|search| Some(search.target.as_str()) == baseline);
    for search in first.into_iter().chain(rest) {
        let said = capacity::summary_text(&search.estimate);
        writeln!(out, "#   {}: {said}", search.key)?;
        let scenario = capacity::first_scenario(analysis, search);
        if let (CapacityEstimate::Estimated { estimate, .. }, Some(scenario)) =
            (&search.estimate, scenario)
        {
            let name = names.capacity_name(scenario);
            writeln!(
                out,
                "Benchmark{name} 1 {estimate} {}",
                unit(Metric::RequestsPerS)
            )?;
        }
    }
    Ok(())
}

fn write_header(analysis: &RunAnalysis, out: &mut dyn Write) -> io::Result<()> {
    let run = &analysis.run;
    let p = &run.provenance;
    writeln!(
        out,
        "# corobench run {} (suite {}), for benchstat:",
        run.id, run.suite
    )?;
    writeln!(
        out,
        "#   benchstat -col /target FILE        compares the targets of this run"
    )?;
    writeln!(
        out,
        "#   benchstat A B                      compares two runs (add -ignore KEY,… for config keys that differ)"
    )?;
    write_claims(analysis, out)?;
    if let Some(machine) = &analysis.machine {
        // A comment, not a config line: a config key that differs between
        // two runs would keep benchstat from pairing them.
        writeln!(out, "# machine speed: {}", one_line(&machine.text))?;
    }
    let config = [
        ("goos", std::env::consts::OS.to_owned()),
        ("goarch", go_arch(std::env::consts::ARCH).to_owned()),
        ("pkg", "corobench".to_owned()),
        ("cpu", p.cpu_model.clone()),
        ("commit", p.corobench_commit.clone().unwrap_or_default()),
        ("kernel", p.kernel.clone()),
        ("server-cpus", p.server_cpus.clone()),
        ("generator-cpus", p.generator_cpus.clone()),
        ("load-backend", p.load_backend.clone()),
    ];
    for (key, value) in config {
        let value = one_line(&value);
        if !value.is_empty() {
            writeln!(out, "{key}: {value}")?;
        }
    }
    for metric in analysis.metrics.iter().map(|info| info.id) {
        let better = match metric.better() {
            corobench_model::Better::Higher => "higher",
            corobench_model::Better::Lower => "lower",
        };
        writeln!(out, "Unit {} better={better}", unit(metric))?;
    }
    Ok(())
}

/// The published claims as comments (benchstat reads past them): each
/// with its verdict, the measured and the claimed ratio, and why.
fn write_claims(analysis: &RunAnalysis, out: &mut dyn Write) -> io::Result<()> {
    if analysis.claims.is_empty() {
        return Ok(());
    }
    writeln!(out, "# published claims, judged on this run's trials:")?;
    for (i, verdict) in analysis.claims.iter().enumerate() {
        writeln!(out, "#   {}. {}", i + 1, one_line(&verdict.claim.says))?;
        writeln!(out, "#      source: {}", one_line(&verdict.claim.source))?;
        let measured = match verdict.ratio {
            Some(_) => format!("measured {}, ", verdict.ratio_text),
            None => String::new(),
        };
        writeln!(
            out,
            "#      {}: {measured}claimed {}",
            verdict.verdict_text, verdict.claimed_text
        )?;
        writeln!(out, "#      why: {}", one_line(&verdict.why))?;
    }
    Ok(())
}

/// Go's name for the machine architecture.
fn go_arch(rust_arch: &str) -> &str {
    match rust_arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64",
        other => other,
    }
}

/// A config value must stay on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How scenario names are built for one run.
struct Names {
    baseline: Option<String>,
    /// Parameters that vary in the run and that the baseline target has.
    row_parameters: BTreeSet<String>,
    /// Per target, its parameters that vary and that the baseline lacks.
    column_parameters: BTreeMap<String, BTreeSet<String>>,
}

impl Names {
    fn new(analysis: &RunAnalysis) -> Self {
        let baseline = analysis.settings.baseline_target.clone();
        let baseline_parameters: BTreeSet<&String> = analysis
            .scenarios
            .iter()
            .filter(|s| Some(&s.scenario.target) == baseline.as_ref())
            .flat_map(|s| s.scenario.parameters.keys())
            .collect();
        let mut values: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
        for s in &analysis.scenarios {
            for (k, v) in &s.scenario.parameters {
                values.entry((&s.scenario.target, k)).or_default().insert(v);
            }
        }
        let varying: BTreeSet<(&str, &str)> = values
            .iter()
            .filter(|(_, seen)| seen.len() > 1)
            .map(|(key, _)| *key)
            .collect();
        let mut row_parameters = BTreeSet::new();
        let mut column_parameters: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (target, name) in varying {
            if baseline_parameters.contains(&name.to_owned()) {
                row_parameters.insert(name.to_owned());
            } else {
                let own = column_parameters.entry(target.to_owned()).or_default();
                own.insert(name.to_owned());
            }
        }
        Self {
            baseline,
            row_parameters,
            column_parameters,
        }
    }

    /// Scenario indices with the baseline target's first.
    fn order(&self, analysis: &RunAnalysis) -> Vec<usize> {
        let is_baseline =
            |i: &usize| Some(&analysis.scenarios[*i].scenario.target) == self.baseline.as_ref();
        let all = 0..analysis.scenarios.len();
        all.clone()
            .filter(is_baseline)
            .chain(all.filter(|i| !is_baseline(i)))
            .collect()
    }

    fn name(&self, s: &ScenarioAnalysis) -> String {
        let rate = match s.scenario.schedule {
            ScheduleKind::Open { rate_per_s } => format!("/rate={rate_per_s}"),
            ScheduleKind::Closed => String::new(),
        };
        format!("{}{rate}{}", self.head(s), connections(s))
    }

    /// A capacity search's name: its scenarios' without the rate, under
    /// its own benchmark, so that its req/s is never pooled with the
    /// trials' and `-col /target` still compares the targets.
    fn capacity_name(&self, s: &ScenarioAnalysis) -> String {
        format!("Capacity{}{}", self.head(s), connections(s))
    }

    /// `<Workload>/target=<column>/<row parameters>`.
    fn head(&self, s: &ScenarioAnalysis) -> String {
        let r = &s.scenario;
        let mut column = clean(&r.target);
        let own = self.column_parameters.get(&r.target);
        for (k, v) in &r.parameters {
            if own.is_some_and(|names| names.contains(k)) {
                column.push_str(&format!(",{}={}", clean(k), clean(v)));
            }
        }
        let mut name = format!("{}/target={column}", capitalised(&clean(&r.workload.name)));
        for (k, v) in &r.parameters {
            if self.row_parameters.contains(k) {
                name.push_str(&format!("/{}={}", clean(k), clean(v)));
            }
        }
        name
    }
}

/// `/c=N`; a program scenario has no connections of corobench's to name.
fn connections(s: &ScenarioAnalysis) -> String {
    if s.scenario.program.is_none() {
        format!("/c={}", s.scenario.connections)
    } else {
        String::new()
    }
}

/// Name parts cannot hold whitespace (it ends the name) or `/` (it splits it).
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_whitespace() || c == '/' {
                '_'
            } else {
                c
            }
        })
        .collect()
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "Workload".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cleaned_and_capitalised() {
        assert_eq!(capitalised(&clean("io-5ms")), "Io-5ms");
        assert_eq!(clean("a b/c"), "a_b_c");
        assert_eq!(capitalised(""), "Workload");
        assert_eq!(go_arch("x86_64"), "amd64");
        assert_eq!(one_line(" AMD\tEPYC  7B13 "), "AMD EPYC 7B13");
    }

    #[test]
    fn latencies_become_nanoseconds() {
        assert_eq!(scaled(Metric::LatencyP99Us, 1.5), 1500.0);
        assert_eq!(scaled(Metric::RequestsPerS, 1.5), 1.5);
        assert_eq!(unit(Metric::LatencyP999Us), "p99.9-ns/op");
    }
}
