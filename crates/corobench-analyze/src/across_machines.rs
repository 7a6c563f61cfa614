//! Published claims across machine kinds: each suite's newest complete run
//! on each kind is judged on its own (as `analyze_run` judges any run), and
//! every claim gets one line across them: each kind's verdict with its
//! interval, and a summary such as "consistent on 1 of 2 machine kinds;
//! refuted (higher) on AMD EPYC, 2 CPUs, Linux 6.18".
//!
//! A claim is the same claim in two runs when the spec states it the same
//! way (its sentence, source, sides, metric and expectation); where each
//! side resolved to may differ between machines.

use std::collections::BTreeMap;

use corobench_model::{
    ClaimAcrossMachines, ClaimOutcome, ClaimRecord, ClaimsAcrossMachines, EVIDENCE_SCHEMA_VERSION,
    MachineKind, MachineRun, MachineVerdict, RunAnalysis, SuiteClaims,
};

use crate::machine_kind::machine_kind;

/// The claims of every suite in `analyses` across the machine kinds that
/// ran it. Where several analyses share a suite and a kind, the newest counts.
#[must_use]
pub fn claims_across_machines(analyses: &[RunAnalysis]) -> ClaimsAcrossMachines {
    let mut by_suite: BTreeMap<&str, BTreeMap<String, (MachineKind, &RunAnalysis)>> =
        BTreeMap::new();
    for analysis in analyses {
        let kind = machine_kind(&analysis.run.provenance);
        let kinds = by_suite.entry(analysis.run.suite.as_str()).or_default();
        let slot = kinds.entry(kind.label.clone()).or_insert((kind, analysis));
        if started(analysis) > started(slot.1) {
            slot.1 = analysis;
        }
    }
    let suites: Vec<SuiteClaims> = by_suite
        .into_iter()
        .map(|(suite, kinds)| suite_claims(suite, kinds.into_values().collect()))
        .collect();
    let mut machines: Vec<MachineKind> = suites
        .iter()
        .flat_map(|s| s.runs.iter().map(|r| r.machine.clone()))
        .collect();
    machines.sort_by(|a, b| a.label.cmp(&b.label));
    machines.dedup();
    ClaimsAcrossMachines {
        schema_version: EVIDENCE_SCHEMA_VERSION,
        kind: "claims_across_machines".to_owned(),
        machines,
        suites,
    }
}

fn started(analysis: &RunAnalysis) -> (i64, &str) {
    (analysis.run.started_at_unix_ms, analysis.run.id.as_str())
}

/// One suite's runs, one per kind in label order, and its claims across them.
fn suite_claims(suite: &str, runs: Vec<(MachineKind, &RunAnalysis)>) -> SuiteClaims {
    let mut newest_first: Vec<&RunAnalysis> = runs.iter().map(|(_, a)| *a).collect();
    newest_first.sort_by(|a, b| started(b).cmp(&started(a)));
    let mut claims: Vec<&ClaimRecord> = Vec::new();
    for claim in newest_first
        .iter()
        .flat_map(|a| a.claims.iter().map(|v| &v.claim))
    {
        if !claims.iter().any(|known| same_claim(known, claim)) {
            claims.push(claim);
        }
    }
    SuiteClaims {
        suite: suite.to_owned(),
        runs: runs
            .iter()
            .map(|(machine, analysis)| MachineRun {
                machine: machine.clone(),
                run_id: analysis.run.id.clone(),
                started_at_unix_ms: analysis.run.started_at_unix_ms,
            })
            .collect(),
        claims: claims
            .into_iter()
            .map(|claim| across(claim, &runs))
            .collect(),
    }
}

/// One claim's verdict on every kind, and what they come to.
fn across(claim: &ClaimRecord, runs: &[(MachineKind, &RunAnalysis)]) -> ClaimAcrossMachines {
    let verdicts: Vec<MachineVerdict> = runs
        .iter()
        .map(|(machine, analysis)| MachineVerdict {
            machine: machine.clone(),
            run_id: analysis.run.id.clone(),
            verdict: analysis
                .claims
                .iter()
                .find(|v| same_claim(&v.claim, claim))
                .cloned(),
        })
        .collect();
    let outcomes: Vec<(ClaimOutcome, &str)> = verdicts
        .iter()
        .filter_map(|v| Some((v.verdict.as_ref()?.outcome, v.machine.label.as_str())))
        .collect();
    let consistent = outcomes
        .iter()
        .filter(|(o, _)| *o == ClaimOutcome::Consistent)
        .count();
    let claimed_text = verdicts
        .iter()
        .find_map(|v| v.verdict.as_ref().map(|v| v.claimed_text.clone()))
        .unwrap_or_default();
    ClaimAcrossMachines {
        claim: claim.clone(),
        claimed_text,
        stated: outcomes.len(),
        consistent,
        differs: differs(&outcomes),
        summary: summary(&outcomes, consistent),
        verdicts,
    }
}

/// The same claim as a spec states it: everything but where its sides
/// resolved to on the machine that ran it.
fn same_claim(a: &ClaimRecord, b: &ClaimRecord) -> bool {
    (&a.source, &a.says, &a.workload, a.metric) == (&b.source, &b.says, &b.workload, b.metric)
        && (&a.a.selector, &a.a.target) == (&b.a.selector, &b.a.target)
        && (&a.b.selector, &a.b.target) == (&b.b.selector, &b.b.target)
        && a.expectation == b.expectation
        && a.published == b.published
}

/// Whether two kinds that measured the claim reached different verdicts.
fn differs(outcomes: &[(ClaimOutcome, &str)]) -> bool {
    let mut measured = outcomes
        .iter()
        .map(|(o, _)| *o)
        .filter(|o| *o != ClaimOutcome::NotMeasured);
    let Some(first) = measured.next() else {
        return false;
    };
    measured.any(|o| o != first)
}

/// The order other verdicts are listed in, and their words.
const OTHERS: [(ClaimOutcome, &str); 4] = [
    (ClaimOutcome::RefutedLower, "refuted (lower)"),
    (ClaimOutcome::RefutedHigher, "refuted (higher)"),
    (ClaimOutcome::Inconclusive, "inconclusive"),
    (ClaimOutcome::NotMeasured, "not measured"),
];

/// `consistent on 1 of 2 machine kinds; refuted (higher) on AMD EPYC, 2
/// CPUs, Linux 6.18`.
fn summary(outcomes: &[(ClaimOutcome, &str)], consistent: usize) -> String {
    let kinds = if outcomes.len() == 1 { "kind" } else { "kinds" };
    let mut parts = vec![format!(
        "consistent on {consistent} of {} machine {kinds}",
        outcomes.len()
    )];
    for (outcome, words) in OTHERS {
        let on: Vec<&str> = outcomes
            .iter()
            .filter(|(o, _)| *o == outcome)
            .map(|(_, label)| *label)
            .collect();
        if !on.is_empty() {
            parts.push(format!("{words} on {}", on.join(" and ")));
        }
    }
    parts.join("; ")
}
