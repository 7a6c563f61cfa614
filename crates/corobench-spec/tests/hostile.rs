//! Specs written to break the resolver: numbers that overflow.

mod common;

use std::path::Path;
use std::time::Duration;

use common::catalog;
use corobench_spec::{Plan, SpecError, resolve};

const WORKLOAD: &str = "[[workloads]]\nname = \"p\"\npath = \"/plaintext\"\n";

fn resolve_text(text: &str) -> Result<Plan, SpecError> {
    resolve(text, Some(Path::new("suite.toml")), &catalog())
}

fn with_workload(head: &str) -> String {
    format!("{head}\n{WORKLOAD}")
}

#[test]
fn the_estimate_saturates_instead_of_overflowing() {
    let spec = with_workload(
        "[run]\ntrials = 10000\nduration = \"24h\"\nwarmup = \"24h\"\nidle = \"24h\"\n[schedule]\nconnections = [2, 3, 4, 5, 6, 7, 8, 9]",
    );
    let plan = resolve_text(&spec).unwrap();
    let day = Duration::from_secs(24 * 60 * 60);
    let estimate = plan.estimated_duration(Duration::ZERO);
    assert_eq!(estimate, day * 3 * 10_000 * 8 * 2);
    let mut huge = plan.clone();
    for scenario in &mut huge.scenarios {
        scenario.measurement.duration = Duration::MAX;
    }
    assert_eq!(huge.estimated_duration(Duration::MAX), Duration::MAX);
}
