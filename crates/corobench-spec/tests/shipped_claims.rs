//! The claims of shipped suites compare what their headers say they
//! compare: each side of a sweep differs from the other in the swept value
//! only, and a queue kept full has workers + queue connections.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use corobench_model::{ClaimScenario, ClaimSide};
use corobench_spec::{Catalog, CatalogProgram, CatalogTarget, Domain, Plan, resolve};

fn suite(name: &str) -> (String, PathBuf) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../suites")
        .join(format!("{name}.toml"));
    (std::fs::read_to_string(&path).unwrap(), path)
}

/// The shared catalog, plus go-fairness with the parameters its suite sets.
fn catalog() -> Catalog {
    let mut catalog = common::catalog();
    let count = Domain::Integer {
        min: 0,
        max: 1_000_000,
    };
    let names = [
        "short_tasks",
        "long_tasks",
        "short_ms",
        "long_ms",
        "short_interval_ms",
        "gomaxprocs",
    ];
    catalog.targets.push(CatalogTarget {
        name: "go-fairness".into(),
        available: Ok(()),
        parameters: names
            .iter()
            .map(|n| ((*n).to_string(), count.clone()))
            .collect(),
        min_warmup: Duration::ZERO,
        program: Some(CatalogProgram {
            needs_server: false,
            metrics: vec!["short-mean-ms".into(), "short-p95-ms".into()],
        }),
    });
    catalog
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
