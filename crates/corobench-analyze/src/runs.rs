//! Two runs compared scenario by scenario (`corobench compare A B`): run A
//! is the baseline; scenarios are matched by key; each metric gets a table
//! with a geomean row, as benchstat prints one per unit.

use corobench_model::StoredRun;
use corobench_model::{
    ANALYSIS_SCHEMA_VERSION, CompareRow, CompareSide, CompareTable, GateRule, Geomean, Metric,
    Provenance, RunComparison, ScenarioAnalysis, WarningKind,
};
use corobench_stats::{format_signed_pct, geomean_of_ratios, geometric_mean};

use super::baseline::{Sides, compare_metric};
use super::gate;
use super::scenarios::{analyze_all, values_of};
use super::warnings::{Warnings, too_few_to_detect};
use super::{AnalyzeOptions, metric_infos, settings};

/// Compares run `b` with run `a` (the baseline), scenario key by scenario key.
#[must_use]
pub fn compare_runs(a: &StoredRun, b: &StoredRun, options: &AnalyzeOptions) -> RunComparison {
    compare_runs_gated(a, b, options, None)
}

/// [`compare_runs`], and when `gate_rules` are given, the regression gate's
/// verdict on every matched scenario.
#[must_use]
pub fn compare_runs_gated(
    a: &StoredRun,
    b: &StoredRun,
    options: &AnalyzeOptions,
    gate_rules: Option<&[GateRule]>,
) -> RunComparison {
    let mut notes = Warnings::default();
    let side_a = analyze_all(a, options, &mut notes, &format!("run A ({}): ", a.run.id));
    let side_b = analyze_all(b, options, &mut notes, &format!("run B ({}): ", b.run.id));
    let find_b = |key: &str| side_b.iter().find(|s| s.scenario.key == *key);
    let matched: Vec<(&ScenarioAnalysis, &ScenarioAnalysis)> = side_a
        .iter()
        .filter_map(|sa| find_b(sa.scenario.key.as_str()).map(|sb| (sa, sb)))
        .collect();
    let only_in_a = unmatched(&side_a, &side_b);
    let only_in_b = unmatched(&side_b, &side_a);
    let measured: std::collections::BTreeSet<Metric> = matched
        .iter()
        .flat_map(|(sa, sb)| sa.metrics.keys().chain(sb.metrics.keys()).copied())
        .collect();
    let tables: Vec<CompareTable> = measured
        .into_iter()
        .filter_map(|metric| table(metric, &matched, options))
        .collect();
    let gate = gate_rules.map(|rules| gate::check(rules, &matched, &tables, options));
    for (sa, sb) in &matched {
        let (na, nb) = (trials_with_rate(sa), trials_with_rate(sb));
        if let Some(found) = too_few_to_detect(na, nb, options) {
            notes.add_found(found, Some(sa.scenario.key.as_str()));
        }
    }
    provenance_warnings(&a.run.provenance, &b.run.provenance, &mut notes);
    if a.run.id == b.run.id {
        notes.add(
            WarningKind::SameRun,
            format!(
                "run {} is compared with itself, so every difference is zero; name two runs",
                a.run.id
            ),
            None,
        );
    }
    super::wide::merge_alike(&mut notes, options);
    RunComparison {
        schema_version: ANALYSIS_SCHEMA_VERSION,
        kind: "run_comparison".to_owned(),
        a: side(a),
        b: side(b),
        settings: settings(options, None),
        metrics: metric_infos(&side_a.iter().chain(&side_b).collect::<Vec<_>>()),
        tables,
        only_in_a,
        only_in_b,
        warnings: notes.into_list(),
        gate,
    }
}

fn side(run: &StoredRun) -> CompareSide {
    CompareSide {
        run: run.run.clone(),
        trials_per_scenario: run.trials_per_scenario,
    }
}

fn trials_with_rate(scenario: &ScenarioAnalysis) -> usize {
    values_of(&scenario.trials, Metric::RequestsPerS).len()
}

fn unmatched(ours: &[ScenarioAnalysis], theirs: &[ScenarioAnalysis]) -> Vec<String> {
    ours.iter()
        .filter(|s| !theirs.iter().any(|t| t.scenario.key == s.scenario.key))
        .map(|s| s.scenario.key.to_string())
        .collect()
}

/// One metric's rows; `None` when no matched scenario has this metric.
fn table(
    metric: Metric,
    matched: &[(&ScenarioAnalysis, &ScenarioAnalysis)],
    options: &AnalyzeOptions,
) -> Option<CompareTable> {
    let rows: Vec<CompareRow> = matched
        .iter()
        .map(|(sa, sb)| row(metric, sa, sb, options))
        .filter(|r| r.a.is_some() || r.b.is_some())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let geomean = (rows.len() > 1).then(|| geomean(&rows));
    Some(CompareTable {
        metric,
        rows,
        geomean,
    })
}

fn row(
    metric: Metric,
    sa: &ScenarioAnalysis,
    sb: &ScenarioAnalysis,
    options: &AnalyzeOptions,
) -> CompareRow {
    let (a, b) = (sa.metrics.get(&metric), sb.metrics.get(&metric));
    let comparison = a.zip(b).map(|(a, b)| {
        let (va, vb) = (values_of(&sa.trials, metric), values_of(&sb.trials, metric));
        let sides = Sides {
            old: (a, &va),
            new: (b, &vb),
        };
        compare_metric(metric, &sides, options)
    });
    CompareRow {
        key: sa.scenario.key.to_string(),
        a: a.cloned(),
        b: b.cloned(),
        comparison,
    }
}

/// benchstat's geomean row: the geometric mean of each column's centers,
/// and of the per-row change estimates over the rows both runs have.
fn geomean(rows: &[CompareRow]) -> Geomean {
    let mut notes = Vec::new();
    let mut center = |values: Vec<f64>| {
        let gm = geometric_mean(&values).ok();
        if gm.is_none() && !values.is_empty() {
            let note = "summaries must be > 0 to compute a geomean".to_owned();
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        gm
    };
    let a = center(
        rows.iter()
            .filter_map(|r| r.a.as_ref().map(|s| s.median))
            .collect(),
    );
    let b = center(
        rows.iter()
            .filter_map(|r| r.b.as_ref().map(|s| s.median))
            .collect(),
    );
    // The rows' own change estimates, so that the summary agrees with them;
    // a row without a ratio (0 against more) leaves the geomean undefined.
    let pairs: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| r.comparison.as_ref())
        .map(|c| (1.0, c.ratio.unwrap_or(f64::INFINITY)))
        .collect();
    let ratio = geomean_of_ratios(&pairs).ok();
    if ratio.is_none() && !pairs.is_empty() {
        notes.push("ratios must be > 0 to compute a geomean".to_owned());
    }
    Geomean {
        a,
        b,
        ratio,
        delta_text: ratio.map(|r| format_signed_pct(r - 1.0)),
        notes,
    }
}

/// Differences in where and with what the runs were measured.
fn provenance_warnings(a: &Provenance, b: &Provenance, notes: &mut Warnings) {
    let fields = [
        ("CPU", &a.cpu_model, &b.cpu_model),
        ("kernel", &a.kernel, &b.kernel),
        ("host", &a.hostname, &b.hostname),
        ("server CPUs", &a.server_cpus, &b.server_cpus),
        ("generator CPUs", &a.generator_cpus, &b.generator_cpus),
        ("load backend", &a.load_backend, &b.load_backend),
        (
            "corobench version",
            &a.corobench_version,
            &b.corobench_version,
        ),
    ];
    let differing: Vec<String> = fields
        .iter()
        .filter(|(_, x, y)| x != y)
        .map(|(name, x, y)| format!("{name} {x} vs {y}"))
        .collect();
    if !differing.is_empty() {
        notes.add(
            WarningKind::ProvenanceDiffers,
            format!(
                "the runs were measured differently ({}): a difference may come from the \
                 machine or the tool, not from the targets",
                differing.join("; ")
            ),
            None,
        );
    }
    // A server that ran the same executable in both runs ran the same code,
    // whatever else its folder held (a run recorded before its identity was
    // its executable hashed the whole folder, results database included).
    let same_program = |target: &str| {
        let key = format!("{target} executable");
        a.tool_versions
            .get(&key)
            .is_some_and(|x| b.tool_versions.get(&key) == Some(x))
    };
    let changed: Vec<&str> = a
        .target_sources
        .iter()
        .filter(|(target, hash)| b.target_sources.get(*target).is_some_and(|h| h != *hash))
        .map(|(target, _)| target.as_str())
        .filter(|target| !same_program(target))
        .collect();
    if !changed.is_empty() {
        notes.add(
            WarningKind::ProvenanceDiffers,
            format!(
                "the sources of {} changed between the runs: their differences include code \
                 changes",
                changed.join(", ")
            ),
            None,
        );
    }
    servers_changed(a, b, notes);
}

/// A user's server that ran another executable or command line in the two
/// runs (its `NAME executable` and `NAME command` entries).
fn servers_changed(a: &Provenance, b: &Provenance, notes: &mut Warnings) {
    let differing: Vec<String> = a
        .tool_versions
        .iter()
        .filter(|(key, _)| key.ends_with(" executable") || key.ends_with(" command"))
        .filter_map(|(key, old)| {
            let new = b.tool_versions.get(key)?;
            (new != old).then(|| format!("{key}: {old} vs {new}"))
        })
        .collect();
    if !differing.is_empty() {
        notes.add(
            WarningKind::ProvenanceDiffers,
            format!(
                "a server ran another program in the two runs ({}): the difference includes it",
                differing.join("; ")
            ),
            None,
        );
    }
}
