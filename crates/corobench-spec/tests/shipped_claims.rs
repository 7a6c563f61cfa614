//! The claims of shipped suites compare what their headers say they
//! compare: each side of a sweep differs from the other in the swept value
//! only, and a queue kept full has workers + queue connections.

mod common;

use std::path::{Path, PathBuf};

use corobench_model::{ClaimScenario, ClaimSide};
use corobench_spec::{Catalog, Plan, resolve};

fn suite(name: &str) -> (String, PathBuf) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../suites")
        .join(format!("{name}.toml"));
    (std::fs::read_to_string(&path).unwrap(), path)
}

/// The catalog every shipped suite resolves against.
fn catalog() -> Catalog {
    common::shipped::with_programs(common::catalog())
}

fn plan(name: &str) -> Plan {
    let (text, path) = suite(name);
    resolve(&text, Some(&path), &catalog()).unwrap()
}

/// The `name=value` words of a side's scenario key.
fn words(side: &ClaimSide) -> Vec<(String, String)> {
    let ClaimScenario::Scenario(key) = &side.resolved else {
        panic!("{} is not measured", side.selector);
    };
    key.as_str()
        .split('/')
        .filter_map(|word| word.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn value(words: &[(String, String)], name: &str) -> u32 {
    let found = words.iter().find(|(k, _)| k == name);
    found
        .unwrap_or_else(|| panic!("no {name} in {words:?}"))
        .1
        .parse()
        .unwrap()
}

#[test]
fn every_queue_backlog_claim_compares_queues_kept_full() {
    let plan = plan("ants-queue-backlog");
    assert_eq!(plan.claims.len(), 5);
    for claim in &plan.claims {
        for side in [&claim.a, &claim.b] {
            let words = words(side);
            let (workers, queue) = (value(&words, "pool_size"), value(&words, "queue_length"));
            assert_eq!(value(&words, "c"), workers + queue, "{}", side.selector);
        }
        let queues = [&claim.a, &claim.b].map(|side| value(&words(side), "queue_length"));
        assert!(
            queues[0] > queues[1],
            "{}: a has the longer queue",
            claim.says
        );
    }
}

#[test]
fn fairness_claims_differ_only_in_the_long_tasks() {
    let plan = plan("scheduler-fairness");
    assert_eq!(plan.claims.len(), 2);
    for claim in &plan.claims {
        let (mut a, mut b) = (words(&claim.a), words(&claim.b));
        assert_eq!(value(&a, "long_tasks"), 1);
        assert_eq!(value(&b, "long_tasks"), 0);
        a.retain(|(k, _)| k != "long_tasks");
        b.retain(|(k, _)| k != "long_tasks");
        assert_eq!(a, b, "{}", claim.says);
    }
}
