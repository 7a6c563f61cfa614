//! The verification gate of a run: every target is proven honest once
//! before any of its trials; a target that fails a rule is excluded and
//! reported, never measured.

use corobench_verify::RuleResult;

use super::Prepared;
use super::progress::RunProgress;
use crate::verification::{VerifyEnv, check_built};

/// Verifies every built target; failing ones leave `prepared.bench.built`
/// and join `prepared.excluded` with the rules they broke.
pub fn verify_all(prepared: &mut Prepared, show: &RunProgress) {
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
        let failure = match verdict {
            Ok(results) => broken_rules(&results),
            Err(error) => Some(format!("it did not start for verification: {error}")),
        };
        if let Some(why) = failure {
            prepared.bench.built.remove(&name);
            prepared
                .excluded
                .push((name, format!("failed verification: {why}")));
        }
    }
}

/// The failed rules' messages, if any rule failed (warnings pass).
fn broken_rules(results: &[RuleResult]) -> Option<String> {
    let failed: Vec<&str> = results
        .iter()
        .filter(|r| r.is_fail())
        .filter_map(RuleResult::message)
        .collect();
    (!failed.is_empty()).then(|| failed.join("; "))
}
