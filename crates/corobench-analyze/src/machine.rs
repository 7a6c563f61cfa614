//! The machine's own speed over a run: how much the probe run before each
//! trial (a fixed SHA-256 job on the server's CPUs and on the generator's)
//! varied, whether the spread of the servers' req/s came from the machine
//! or from the servers, which comparisons with the baseline lie within that
//! variation, and, on request, each trial's req/s normalised by its probe.

use std::collections::BTreeMap;

use corobench_model::{
    MachineProbe, MachineVariation, Metric, ProbeSet, ProbeSpread, ScenarioAnalysis,
    ScenarioComparison, SpreadSource, StoredRun, TrialRecord, TrialStatus, Warning, WarningKind,
};
use corobench_stats::{max, mean, median, min};

use super::precision::median_precision;
use super::warnings::{QUIET_THE_MACHINE, STEADY_MACHINE, Warnings};

/// Below this coefficient of variation a series counts as steady.
const STEADY_CV: f64 = 0.02;

/// The probe "varied as much as the servers" when its coefficient of
/// variation is at least this fraction of theirs.
const MACHINE_SHARE: f64 = 0.5;

/// How the machine's speed varied over the run's `ok` trials; `None` when
/// fewer than two of them carry a probe.
pub(crate) fn variation(
    run: &StoredRun,
    normalised: bool,
    confidence: f64,
) -> Option<MachineVariation> {
    let probes: Vec<MachineProbe> = ok_trials(run).filter_map(|t| t.probe).collect();
    let server = spread(&speeds(&probes, ProbeSet::Server))?;
    let generator = spread(&speeds(&probes, ProbeSet::Generator))?;
    let servers_cv = servers_cv(run);
    let source = source(server.cv.max(generator.cv), servers_cv);
    // Normalising is advised only where it would narrow this run's intervals.
    let narrowed = (source == SpreadSource::Machine && !normalised)
        .then(|| normalising_narrows(run, confidence))
        .flatten();
    Some(MachineVariation {
        text: text(&server, &generator, servers_cv, source, narrowed),
        server,
        generator,
        servers_cv,
        source,
        normalised,
    })
}

/// The run with each `ok` trial's req/s scaled by median probe speed ÷ the
/// trial's probe speed on the server's CPUs: a trial that ran while the
/// machine was 10% slow counts 10% faster. Trials without a probe keep
/// their value.
#[must_use]
pub fn normalise_by_probe(run: &StoredRun) -> StoredRun {
    let mut run = run.clone();
    let probes: Vec<MachineProbe> = ok_trials(&run).filter_map(|t| t.probe).collect();
    let Ok(typical) = median(&speeds(&probes, ProbeSet::Server)) else {
        return run;
    };
    for trial in &mut run.trials {
        let Some(probe) = trial.probe.filter(|p| p.server_mb_per_s > 0.0) else {
            continue;
        };
        if let Some(load) = trial.load.as_mut() {
            load.requests_per_s *= typical / probe.server_mb_per_s;
        }
    }
    run
}

/// Marks each comparison whose req/s differs from the baseline by less than
/// the machine's own speed varied: the difference may be the machine's.
pub(crate) fn mark_within(
    variation: &MachineVariation,
    comparisons: &[ScenarioComparison],
    scenarios: &mut [ScenarioAnalysis],
    warnings: &mut Warnings,
) {
    let bound = variation
        .server
        .half_range
        .max(variation.generator.half_range);
    if bound <= 0.0 {
        return;
    }
    for comparison in comparisons {
        let within = comparison
            .metrics
            .iter()
            .filter(|m| m.metric == Metric::RequestsPerS)
            .filter_map(|m| m.ratio)
            .any(|ratio| (ratio - 1.0).abs() <= bound);
        if !within {
            continue;
        }
        let message = format!(
            "req/s differs from the baseline by less than the machine's own speed varied during \
             the run (±{:.1}%, the probe before each trial): the difference may be the \
             machine's, not the servers'; add trials to tell",
            bound * 100.0
        );
        let scenario = &mut scenarios[comparison.scenario];
        let key = scenario.scenario.key.clone();
        let index = warnings.add(
            WarningKind::WithinMachineVariation,
            message,
            Some(key.as_str()),
        );
        if !scenario.warnings.contains(&index) {
            scenario.warnings.push(index);
        }
    }
}

/// The run-wide note on the machine's speed, with its advice.
pub(crate) fn note(variation: &MachineVariation, warnings: &mut Warnings) {
    warnings.add(WarningKind::MachineSpeed, variation.text.clone(), None);
}

/// A wide interval on a machine whose speed was steady is the servers'
/// doing: its warning stops advising to quiet the machine.
pub(crate) fn reword_wide_intervals(variation: Option<&MachineVariation>, list: &mut [Warning]) {
    if variation.is_none_or(|v| v.source != SpreadSource::Servers) {
        return;
    }
    for warning in list.iter_mut().filter(|w| w.kind == WarningKind::WideCi) {
        warning.message = warning.message.replace(QUIET_THE_MACHINE, STEADY_MACHINE);
    }
}

fn ok_trials(run: &StoredRun) -> impl Iterator<Item = &TrialRecord> {
    run.trials.iter().filter(|t| t.status == TrialStatus::Ok)
}

fn speeds(probes: &[MachineProbe], set: ProbeSet) -> Vec<f64> {
    probes
        .iter()
        .map(|p| p.speed(set))
        .filter(|s| s.is_finite() && *s > 0.0)
        .collect()
}

/// The spread of one set's speeds; `None` for fewer than two.
fn spread(speeds: &[f64]) -> Option<ProbeSpread> {
    if speeds.len() < 2 {
        return None;
    }
    let (lowest, highest) = (min(speeds).ok()?, max(speeds).ok()?);
    let middle = median(speeds).ok()?;
    Some(ProbeSpread {
        trials: u32::try_from(speeds.len()).unwrap_or(u32::MAX),
        median_mb_per_s: middle,
        min_mb_per_s: lowest,
        max_mb_per_s: highest,
        cv: cv(speeds)?,
        half_range: (highest - lowest) / 2.0 / middle,
    })
}

/// Standard deviation (n − 1) ÷ mean; `None` for fewer than two values.
fn cv(values: &[f64]) -> Option<f64> {
    let average = mean(values).ok()?;
    if values.len() < 2 || average <= 0.0 {
        return None;
    }
    let n = values.len() as f64;
    let variance = values.iter().map(|v| (v - average).powi(2)).sum::<f64>() / (n - 1.0);
    Some(variance.sqrt() / average)
}

/// The median over scenarios with two or more `ok` trials of the
/// coefficient of variation of their headline figure (req/s).
fn servers_cv(run: &StoredRun) -> Option<f64> {
    let mut by_scenario: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for trial in ok_trials(run) {
        if let Some(value) = trial.headline() {
            by_scenario
                .entry(trial.scenario_index)
                .or_default()
                .push(value);
        }
    }
    let cvs: Vec<f64> = by_scenario.values().filter_map(|v| cv(v)).collect();
    median(&cvs).ok()
}

fn source(probe_cv: f64, servers_cv: Option<f64>) -> SpreadSource {
    let servers = servers_cv.unwrap_or(0.0);
    if probe_cv < STEADY_CV && servers < STEADY_CV {
        SpreadSource::Steady
    } else if probe_cv >= MACHINE_SHARE * servers {
        SpreadSource::Machine
    } else {
        SpreadSource::Servers
    }
}

/// The median over scenarios of the req/s interval's relative half-width,
/// as measured and normalised by the probe, when normalising narrows it by
/// a tenth or more; `None` otherwise (or with no bounded interval).
fn normalising_narrows(run: &StoredRun, confidence: f64) -> Option<(f64, f64)> {
    let widths = |run: &StoredRun| -> Vec<f64> {
        run.scenarios
            .iter()
            .filter_map(|scenario| {
                let rates: Vec<f64> = ok_trials(run)
                    .filter(|t| t.scenario_index == scenario.index)
                    .filter_map(|t| Metric::RequestsPerS.value(t))
                    .collect();
                median_precision(&rates, confidence)
            })
            .collect()
    };
    let measured = median(&widths(run)).ok()?;
    let normalised = median(&widths(&normalise_by_probe(run))).ok()?;
    (normalised <= 0.9 * measured).then_some((measured, normalised))
}

fn text(
    server: &ProbeSpread,
    generator: &ProbeSpread,
    servers_cv: Option<f64>,
    source: SpreadSource,
    narrowed: Option<(f64, f64)>,
) -> String {
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let probe = format!(
        "the machine-speed probe (a fixed SHA-256 job before each of {} trials) ran within \
         ±{} of its median on the server CPUs (CV {}) and ±{} on the generator CPUs (CV {})",
        server.trials,
        pct(server.half_range),
        pct(server.cv),
        pct(generator.half_range),
        pct(generator.cv)
    );
    let servers = servers_cv.map_or_else(
        || "the servers' req/s had too few trials to compare".to_owned(),
        |cv| format!("the servers' req/s varied with a median CV of {}", pct(cv)),
    );
    let advice = match (source, narrowed) {
        (SpreadSource::Machine, None) => "The spread comes from the machine's own speed, not \
             from the servers: a quieter machine (a fixed CPU frequency, no other load) or \
             more trials narrow it."
            .to_owned(),
        (SpreadSource::Machine, Some((measured, normalised))) => format!(
            "The spread comes from the machine's own speed, not from the servers: a quieter \
             machine (a fixed CPU frequency, no other load) or more trials narrow it, and so \
             does `report --normalise-by-probe` here (req/s intervals ±{} → ±{} in the median \
             scenario).",
            pct(measured),
            pct(normalised)
        ),
        (SpreadSource::Servers, _) => "The machine's speed was steady, so the spread comes \
             from the servers themselves: quieting the machine will not narrow it; add trials."
            .to_owned(),
        (SpreadSource::Steady, _) => "Both were steady.".to_owned(),
    };
    format!("{probe}; {servers}. {advice}")
}
