//! What a request costs the kernel: per-request metrics from the window's
//! counts, and counters the kernel refused.

use corobench_model::{
    Cost, KernelCounter, KernelCounts, Metric, MissingCounter, PerRequest, Side, StoredRun,
    TrialCounters, WarningKind,
};

use crate::fixtures::RunBuilder;
use crate::{AnalyzeOptions, analyze_run};

const RATES: [f64; 6] = [1000.0, 1000.0, 2000.0, 2000.0, 4000.0, 4000.0];

/// Six trials whose server made two system calls per request and whose
/// generator made one; `missing` is what the kernel refused.
fn counted_run(missing: Vec<MissingCounter>) -> StoredRun {
    let mut run = RunBuilder::new("r1", 6)
        .scenario("srv", &[], "plaintext", 4)
        .rates(&RATES)
        .build();
    for trial in &mut run.trials {
        let requests = trial.load.as_ref().unwrap().requests;
        if let Some(resources) = trial.resources.as_mut() {
            resources.cpu_user_pct_mean = 50.0;
            resources.cpu_system_pct_mean = 25.0;
        }
        let refused = |counter| missing.iter().any(|m| m.counter == counter);
        trial.counters = Some(TrialCounters {
            server: KernelCounts {
                syscalls: (!refused(KernelCounter::Syscalls)).then_some(2 * requests),
                ctx_switches: Some(requests / 10),
                minor_faults: Some(0),
                threads: 3,
            },
            generator: KernelCounts {
                syscalls: (!refused(KernelCounter::Syscalls)).then_some(requests),
                ctx_switches: Some(requests / 100),
                minor_faults: Some(0),
                threads: 1,
            },
            missing: missing.clone(),
            responses: None,
        });
    }
    run
}

fn median(run: &StoredRun, metric: PerRequest) -> Option<f64> {
    let analysis = analyze_run(run, &AnalyzeOptions::default()).unwrap();
    analysis.scenarios[0]
        .metrics
        .get(&Metric::PerRequest(metric))
        .map(|s| s.median)
}

#[test]
fn window_counts_are_divided_by_the_requests_of_the_window() {
    let run = counted_run(Vec::new());
    assert_eq!(median(&run, PerRequest::server(Cost::Syscalls)), Some(2.0));
    assert_eq!(
        median(&run, PerRequest::server(Cost::ContextSwitches)),
        Some(0.1)
    );
    assert_eq!(
        median(&run, PerRequest::generator(Cost::Syscalls)),
        Some(1.0)
    );
    // Half a core of user time over 1 s at 2000 req/s (the median): 250 µs.
    assert_eq!(median(&run, PerRequest::server(Cost::UserCpu)), Some(250.0));
    assert_eq!(
        median(&run, PerRequest::server(Cost::SystemCpu)),
        Some(125.0)
    );
    // The fixture's generator used 0.1 s user CPU per window.
    assert_eq!(
        median(&run, PerRequest::generator(Cost::UserCpu)),
        Some(50.0)
    );
}

#[test]
fn the_responses_of_the_counters_own_span_divide_their_counts() {
    let mut run = counted_run(Vec::new());
    for trial in &mut run.trials {
        let requests = trial.load.as_ref().unwrap().requests;
        trial.counters.as_mut().unwrap().responses = Some(requests / 2);
    }
    assert_eq!(median(&run, PerRequest::server(Cost::Syscalls)), Some(4.0));
    // The CPU split is the load window's, divided by its requests.
    assert_eq!(median(&run, PerRequest::server(Cost::UserCpu)), Some(250.0));
}

#[test]
fn a_refused_counter_leaves_its_metric_out_and_says_why_once() {
    let reason = "perf_event_open was refused (Permission denied)";
    let missing = [Side::Server, Side::Generator].map(|side| MissingCounter {
        side,
        counter: KernelCounter::Syscalls,
        reason: reason.to_owned(),
    });
    let run = counted_run(missing.to_vec());
    assert_eq!(median(&run, PerRequest::server(Cost::Syscalls)), None);
    assert_eq!(median(&run, PerRequest::generator(Cost::Syscalls)), None);
    assert_eq!(
        median(&run, PerRequest::server(Cost::ContextSwitches)),
        Some(0.1)
    );
    let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
    let warnings: Vec<_> = analysis
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::CountersMissing)
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(
        warnings[0].message,
        format!(
            "syscalls/req, gen syscalls/req not measured: the kernel counter was refused \
             ({reason}); the trials ran and were stored without it"
        )
    );
}

#[test]
fn trials_stored_without_counters_have_no_kernel_metrics() {
    let run = RunBuilder::new("r1", 6)
        .scenario("srv", &[], "plaintext", 4)
        .rates(&RATES)
        .build();
    assert_eq!(median(&run, PerRequest::server(Cost::Syscalls)), None);
    // The CPU split comes from /proc and the generator's own clocks.
    assert!(median(&run, PerRequest::generator(Cost::SystemCpu)).is_some());
}
