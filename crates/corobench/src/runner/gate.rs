//! The verification gate of a run: every target is proven honest once
//! before any of its trials, and a target that breaks a rule bearing on what
//! the run measures is excluded and reported, never measured.
//!
//! Rules about one endpoint (`/upload`, `/db`, …) bear on a run only when
//! one of its workloads uses that endpoint: a server whose upload limit is
//! wrong still serves `/plaintext` exactly as the contract says. Every other
//! rule (headers, keep-alive, dates, errors, SIGTERM) always bears.

use corobench_spec::Plan;
use corobench_verify::RuleResult;

use super::Prepared;
use super::progress::RunProgress;
use crate::verification::{VerifyEnv, check_built};

/// Rules that check one endpoint only, with that endpoint.
const ENDPOINT_RULES: [(&str, &str); 5] = [
    ("io", "/io"),
    ("db", "/db"),
    ("file", "/file"),
    ("upload", "/upload"),
    ("mixed", "/mixed"),
];

/// Verifies every built target; those failing a rule that bears on the plan
/// leave `prepared.bench.built` and join `prepared.excluded`.
pub fn verify_all(plan: &Plan, prepared: &mut Prepared, show: &RunProgress) {
    let names: Vec<String> = prepared.bench.built.keys().cloned().collect();
    for name in names {
        show.note(&format!("verifying {name}"));
        let verdict = {
            let bench = &prepared.bench;
            let env = VerifyEnv {
                data_dir: bench.data_dir.clone(),
                work_dir: bench.work_root.join("verify"),
                database: prepared.postgres.as_ref(),
                database_missing: None,
                cpus: Some(bench.server_cpus.clone()),
            };
            check_built(&bench.built[&name], &env)
        };
        let results = match verdict {
            Ok(results) => results,
            Err(error) => {
                prepared.bench.built.remove(&name);
                prepared
                    .excluded
                    .push((name, format!("it did not start for verification: {error}")));
                continue;
            }
        };
        let (bearing, aside): (Vec<&RuleResult>, Vec<&RuleResult>) = results
            .iter()
            .filter(|r| r.is_fail())
            .partition(|r| bears_on(plan, r.rule));
        for rule in aside {
            show.say(&format!(
                "note: {name} fails `{}`, which no workload of this run uses, so it is measured: {}",
                rule.rule,
                rule.message().unwrap_or("")
            ));
        }
        if !bearing.is_empty() {
            let why: Vec<&str> = bearing.iter().filter_map(|r| r.message()).collect();
            prepared.bench.built.remove(&name);
            prepared
                .excluded
                .push((name, format!("failed verification: {}", why.join("; "))));
        }
    }
}

/// Whether a failure of `rule` makes this plan's figures untrustworthy.
fn bears_on(plan: &Plan, rule: &str) -> bool {
    match ENDPOINT_RULES.iter().find(|(name, _)| *name == rule) {
        None => true,
        Some((_, endpoint)) => plan
            .scenarios
            .iter()
            .any(|s| uses(&s.workload.path, endpoint)),
    }
}

/// Whether a workload path addresses `endpoint` (`/io?ms=10` uses `/io`, `/iox` does not).
fn uses(path: &str, endpoint: &str) -> bool {
    path.strip_prefix(endpoint)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['?', '/']))
}

#[cfg(test)]
mod tests {
    use super::uses;

    #[test]
    fn a_path_uses_an_endpoint_exactly() {
        assert!(uses("/io?ms=10", "/io"));
        assert!(uses("/upload", "/upload"));
        assert!(!uses("/iox", "/io"));
        assert!(!uses("/plaintext", "/io"));
    }
}
