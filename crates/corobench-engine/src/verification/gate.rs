//! The verification gate of a run: every target is proven honest once
//! before any of its trials, in each protocol the run speaks to it, and a
//! target that breaks a rule bearing on what the run measures is excluded
//! and reported, never measured.
//!
//! Rules about one endpoint (`/upload`, `/db`, …) bear on a run only when
//! one of its workloads uses that endpoint: a server whose upload limit is
//! wrong still serves `/plaintext` exactly as the contract says. Every other
//! rule (headers, keep-alive, dates, errors, SIGTERM) always bears.

use std::sync::atomic::Ordering;

use corobench_model::Protocol;
use corobench_spec::Plan;
use corobench_verify::RuleResult;

use super::{VerifyEnv, check_built};
use crate::{PreparedRun, RunObserver};

/// Rules that check one endpoint only, with that endpoint.
const ENDPOINT_RULES: [(&str, &str); 6] = [
    ("io", "/io"),
    ("db", "/db"),
    ("select1", "/select1"),
    ("file", "/file"),
    ("upload", "/upload"),
    ("mixed", "/mixed"),
];

/// Verifies every built target; those failing a rule that bears on the plan
/// are excluded from the run.
pub fn verify_all(plan: &Plan, prepared: &mut PreparedRun, observer: &dyn RunObserver) {
    // A program target serves no HTTP: its first trial shows whether it
    // reports what it declares.
    let names: Vec<String> = prepared
        .env
        .built
        .iter()
        .filter(|(_, built)| built.manifest.program().is_none() && built.manifest.contract)
        .map(|(name, _)| name.clone())
        .collect();
    for name in names {
        for protocol in protocols_of(plan, &name) {
            if prepared.env.stop.load(Ordering::Relaxed) {
                return;
            }
            if !prepared.env.built.contains_key(&name) {
                break;
            }
            verify_one(plan, prepared, &name, protocol, observer);
        }
    }
}

/// The protocols the plan speaks to `target`, cleartext HTTP/1.1 first.
fn protocols_of(plan: &Plan, target: &str) -> Vec<Protocol> {
    let mut protocols: Vec<Protocol> = plan
        .scenarios
        .iter()
        .filter(|s| s.target == target)
        .map(|s| s.schedule.protocol)
        .collect();
    protocols.sort();
    protocols.dedup();
    protocols
}

/// Verifies `name` in `protocol`; excludes it when a rule bearing on the
/// plan fails.
fn verify_one(
    plan: &Plan,
    prepared: &mut PreparedRun,
    name: &str,
    protocol: Protocol,
    observer: &dyn RunObserver,
) {
    let over = if protocol.is_http1() {
        String::new()
    } else {
        format!(" over {protocol}")
    };
    observer.preparing(&format!("verifying {name}{over}"));
    let verdict = {
        let env = &prepared.env;
        let verify_env = VerifyEnv {
            data_dir: env.data_dir.clone(),
            work_dir: env.work_root.join("verify"),
            database: prepared.postgres.as_ref(),
            database_missing: None,
            cpus: Some(env.server_cpus.clone()),
            cancel: Some(&env.stop),
            check_listen: false,
            protocol,
            tls: env.tls.as_ref().filter(|_| protocol.tls),
        };
        check_built(&env.built[name], &verify_env)
    };
    // Interrupted: what was not checked says nothing about the target.
    if prepared.env.stop.load(Ordering::Relaxed) {
        return;
    }
    match verdict {
        Ok(results) => judge(plan, prepared, name, &results, observer),
        Err(error) => {
            prepared.exclude(
                name,
                format!("it did not start for verification{over}: {error}"),
            );
        }
    }
}

/// Rules of optional endpoints: a target that does not serve one is warned
/// about by `verify`, and cannot be measured by a run that uses it.
const OPTIONAL_RULES: [&str; 1] = ["select1"];

/// Whether `result` stops the target from being measured by a plan that
/// uses its rule's endpoint: a failure, or an optional endpoint not served.
fn blocks(result: &RuleResult) -> bool {
    result.is_fail() || (OPTIONAL_RULES.contains(&result.rule) && !result.is_pass())
}

/// Excludes `name` if a failed rule bears on the plan; notes the others.
fn judge(
    plan: &Plan,
    prepared: &mut PreparedRun,
    name: &str,
    results: &[RuleResult],
    observer: &dyn RunObserver,
) {
    let (bearing, aside): (Vec<&RuleResult>, Vec<&RuleResult>) = results
        .iter()
        .filter(|r| blocks(r))
        .partition(|r| bears_on(plan, r.rule));
    for rule in aside {
        observer.notice(&format!(
            "note: {name} fails `{}`, which no workload of this run uses, so it is measured: {}",
            rule.rule,
            rule.message().unwrap_or("")
        ));
    }
    if !bearing.is_empty() {
        let why: Vec<&str> = bearing.iter().filter_map(|r| r.message()).collect();
        prepared.exclude(name, format!("failed verification: {}", why.join("; ")));
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
    use corobench_verify::{Outcome, RuleResult};

    use super::{blocks, uses};

    #[test]
    fn an_optional_endpoint_not_served_blocks_like_a_failure() {
        let warned = |rule| RuleResult {
            rule,
            outcome: Outcome::Warn(format!("{rule}: not served")),
        };
        assert!(blocks(&warned("select1")));
        assert!(!blocks(&warned("keep-alive")));
        let passed = RuleResult {
            rule: "select1",
            outcome: Outcome::Pass,
        };
        assert!(!blocks(&passed));
    }

    #[test]
    fn a_path_uses_an_endpoint_exactly() {
        assert!(uses("/io?ms=10", "/io"));
        assert!(uses("/upload", "/upload"));
        assert!(!uses("/iox", "/io"));
        assert!(!uses("/plaintext", "/io"));
    }
}
