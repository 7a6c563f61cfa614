//! Claims judged per machine kind: each kind's newest complete run on its
//! own, and one line per claim across them.

use corobench_model::{
    ClaimExpectation, ClaimOutcome, ClaimRecord, ClaimScenario, ClaimSide, Metric, RunAnalysis,
    RunStatus, StoredRun,
};

use crate::fixtures::RunBuilder;
use crate::{AnalyzeOptions, analyze_run, claims_across_machines, newest_per_machine};

const TWICE: [f64; 6] = [201.0, 199.0, 203.0, 198.0, 202.0, 200.0];
const THRICE: [f64; 6] = [301.0, 299.0, 303.0, 298.0, 302.0, 300.0];
const BASE: [f64; 6] = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5];

fn side(target: &str) -> ClaimSide {
    ClaimSide {
        selector: target.to_owned(),
        target: target.to_owned(),
        resolved: ClaimScenario::Scenario(format!("{target}/plaintext/c=64").into()),
    }
}

fn claim(says: &str, ratio: f64) -> ClaimRecord {
    ClaimRecord {
        source: "a blog post".to_owned(),
        says: says.to_owned(),
        workload: Some("plaintext".to_owned()),
        metric: Metric::RequestsPerS,
        a: side("fast"),
        b: side("slow"),
        expectation: ClaimExpectation::Ratio {
            ratio,
            tolerance: 0.10,
        },
        published: None,
    }
}

/// A run of suite `seed` on a machine with this CPU and kernel, where fast
/// serves `fast` against slow's `BASE`, stating `claims`.
fn run(id: &str, machine: (&str, &str), fast: &[f64], claims: Vec<ClaimRecord>) -> StoredRun {
    let mut run = RunBuilder::new(id, 6)
        .scenario("fast", &[], "plaintext", 64)
        .rates(fast)
        .scenario("slow", &[], "plaintext", 64)
        .rates(&BASE)
        .build();
    run.run.suite = "seed".to_owned();
    run.run.provenance.cpu_model = machine.0.to_owned();
    run.run.provenance.cpu_count = 2;
    run.run.provenance.kernel = machine.1.to_owned();
    run.run.claims = claims;
    run
}

fn analysed(runs: &[StoredRun]) -> Vec<RunAnalysis> {
    runs.iter()
        .map(|r| analyze_run(r, &AnalyzeOptions::default()).unwrap())
        .collect()
}

const INTEL: (&str, &str) = ("Intel(R) Xeon(R) Processor", "6.18.44-fc-v657");
const AMD: (&str, &str) = ("AMD EPYC", "6.18.44-fc-v509");

#[test]
fn each_kind_is_judged_on_its_own_and_the_summary_names_the_others() {
    let claims = || vec![claim("fast serves twice slow", 2.0)];
    let runs = [
        run("intel", INTEL, &TWICE, claims()),
        run("amd", AMD, &THRICE, claims()),
    ];
    let evidence = claims_across_machines(&analysed(&runs));
    let labels: Vec<&str> = evidence.machines.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "AMD EPYC, 2 CPUs, Linux 6.18",
            "Intel Xeon Processor, 2 CPUs, Linux 6.18"
        ]
    );
    let [suite] = evidence.suites.as_slice() else {
        panic!("one suite: {:?}", evidence.suites);
    };
    let runs: Vec<&str> = suite.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(runs, ["amd", "intel"]);
    let [line] = suite.claims.as_slice() else {
        panic!("one claim");
    };
    let outcomes: Vec<ClaimOutcome> = line
        .verdicts
        .iter()
        .map(|v| v.verdict.as_ref().unwrap().outcome)
        .collect();
    assert_eq!(
        outcomes,
        [ClaimOutcome::RefutedHigher, ClaimOutcome::Consistent]
    );
    assert_eq!((line.consistent, line.stated), (1, 2));
    assert!(line.differs);
    assert_eq!(
        line.summary,
        "consistent on 1 of 2 machine kinds; refuted (higher) on AMD EPYC, 2 CPUs, Linux 6.18"
    );
    assert_eq!(line.claimed_text, "2× ±10%");
}

#[test]
fn a_claim_only_one_kind_stated_is_not_judged_on_the_other() {
    let runs = [
        run(
            "intel",
            INTEL,
            &TWICE,
            vec![claim("fast serves twice slow", 2.0)],
        ),
        run(
            "amd",
            AMD,
            &TWICE,
            vec![claim("fast serves 2.1x slow", 2.1)],
        ),
    ];
    let evidence = claims_across_machines(&analysed(&runs));
    let claims = &evidence.suites[0].claims;
    let says: Vec<&str> = claims.iter().map(|c| c.claim.says.as_str()).collect();
    // The newest run's claims first (both started at once: the larger id).
    assert_eq!(says, ["fast serves twice slow", "fast serves 2.1x slow"]);
    let stated: Vec<Vec<bool>> = claims
        .iter()
        .map(|c| c.verdicts.iter().map(|v| v.verdict.is_some()).collect())
        .collect();
    assert_eq!(stated, [[false, true], [true, false]]);
    assert_eq!(claims[0].summary, "consistent on 1 of 1 machine kind");
    assert!(!claims[0].differs);
}

#[test]
fn the_newest_complete_run_of_each_kind_is_the_one_judged() {
    let mut older = run("intel-1", INTEL, &THRICE, vec![]).run;
    older.started_at_unix_ms -= 1_000;
    let newer = run("intel-2", INTEL, &TWICE, vec![]).run;
    let mut unfinished = run("intel-3", INTEL, &TWICE, vec![]).run;
    unfinished.status = RunStatus::Interrupted;
    unfinished.started_at_unix_ms += 1_000;
    let mut other_suite = run("intel-4", INTEL, &TWICE, vec![]).run;
    other_suite.suite = "another".to_owned();
    let amd = run("amd-1", AMD, &TWICE, vec![]).run;
    let records = [older, newer, unfinished, other_suite, amd];
    let chosen: Vec<&str> = newest_per_machine(&records)
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(chosen, ["intel-4", "amd-1", "intel-2"]);
}
