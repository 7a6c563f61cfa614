//! A run with two scenarios and trials of every shape, for all store tests.

use std::collections::BTreeMap;

use corobench_model::{
    ClaimExpectation, ClaimRecord, ClaimScenario, ClaimSide, ErrorCounts, GeneratorUsage,
    KernelCounter, KernelCounts, LatencyHistogram, LoadReport, LoadWarning, Metric, MissingCounter,
    OpenLoopReport, PrecisionGoal, Provenance, PublishedValues, ResourceSample, ResourceSummary,
    RunRecord, RunStatus, ScenarioRecord, Schedule, ScheduleKind, Side, StatusCounts, TaskCounts,
    TimelineSecond, TrialCounters, TrialFlag, TrialRecord, WorkloadRecord,
};

use crate::Store;

pub(super) const RUN_ID: &str = "20261122-063301-3f9a";
pub(super) const TRIALS_PER_SCENARIO: u32 = 3;

pub(super) fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("results.db")).unwrap();
    (dir, store)
}

pub(super) fn run(id: &str, started_at_unix_ms: i64) -> RunRecord {
    RunRecord {
        id: id.to_owned(),
        started_at_unix_ms,
        finished_at_unix_ms: None,
        status: RunStatus::Running,
        suite: "default".to_owned(),
        spec_toml: "[[scenario]]\ntarget = \"go-nethttp\"\n".to_owned(),
        // Above i64::MAX: must survive SQLite's signed integers.
        seed: u64::MAX - 7,
        provenance: Provenance {
            corobench_version: "0.1.0".to_owned(),
            corobench_commit: Some("v0.1.0-3-gabc1234".to_owned()),
            hostname: "bench-1".to_owned(),
            os: "Debian GNU/Linux 12 (bookworm)".to_owned(),
            kernel: "6.18.44".to_owned(),
            cpu_model: "AMD EPYC".to_owned(),
            cpu_count: 2,
            memory_bytes: 24 << 30,
            server_cpus: "0".to_owned(),
            generator_cpus: "1".to_owned(),
            load_backend: "epoll".to_owned(),
            tool_versions: BTreeMap::from([("go".to_owned(), "go version go1.26".to_owned())]),
            target_sources: BTreeMap::from([("go-nethttp".to_owned(), "sha256:ab12".to_owned())]),
            spec_path: Some("/home/bench/suites/x.toml".to_owned()),
            hosts: Vec::new(),
        },
        claims: vec![claim()],
        baseline: Some("go-nethttp".to_owned()),
        capacity: None,
        // Every column of the run row round-trips, the goal included.
        precision_goal: Some(PrecisionGoal {
            fraction: 0.05,
            budget_s: Some(300.0),
        }),
    }
}

/// A claim whose side a is one of the run's scenarios and whose side b
/// could not run where the run was planned.
fn claim() -> ClaimRecord {
    ClaimRecord {
        source: "a blog post, 2026 (wrk -c64)".to_owned(),
        says: "net/http serves twice what swoole serves".to_owned(),
        workload: Some("io-10ms".to_owned()),
        metric: Metric::RequestsPerS,
        a: ClaimSide {
            selector: "go-nethttp".to_owned(),
            target: "go-nethttp".to_owned(),
            resolved: ClaimScenario::Scenario("go-nethttp/GOMAXPROCS=1/io-10ms/c=64".into()),
        },
        b: ClaimSide {
            selector: "swoole-epoll".to_owned(),
            target: "swoole-epoll".to_owned(),
            resolved: ClaimScenario::Unavailable("the swoole extension is not loaded".to_owned()),
        },
        expectation: ClaimExpectation::Ratio {
            ratio: 2.0,
            tolerance: 0.1,
        },
        published: Some(PublishedValues {
            a: 24_850.0,
            b: 22_160.0,
        }),
    }
}

pub(super) fn scenarios() -> Vec<ScenarioRecord> {
    let scenario = |index: u32, key: &str, schedule: Schedule| ScenarioRecord {
        index,
        key: key.into(),
        target: "go-nethttp".to_owned(),
        parameters: BTreeMap::from([("GOMAXPROCS".to_owned(), "1".to_owned())]),
        workload: WorkloadRecord {
            name: "io-10ms".to_owned(),
            method: "GET".to_owned(),
            path: "/io?ms=10".to_owned(),
            body_bytes: 0,
            idle: false,
            background: None,
        },
        schedule: schedule.kind,
        connections: schedule.connections,
        wire: schedule.wire(),
        protocol: schedule.protocol,
        warmup_s: 2.0,
        duration_s: 10.0,
        program: None,
    };
    vec![
        scenario(
            0,
            "go-nethttp/GOMAXPROCS=1/io-10ms/c=64/pipeline=16",
            Schedule::closed(64).with_pipeline(16),
        ),
        scenario(
            1,
            "go-nethttp/GOMAXPROCS=1/io-10ms/r=500/no-keepalive/tls",
            Schedule::open(500.0, 64)
                .with_keepalive(false)
                .with_protocol(corobench_model::Protocol::TLS),
        ),
    ]
}

fn histogram(values: impl IntoIterator<Item = u64>) -> LatencyHistogram {
    let mut histogram = LatencyHistogram::new();
    for value in values {
        histogram.record_us(value);
    }
    histogram
}

/// A load report with every optional part filled in: an open-loop run with
/// both histograms, a timeline and warnings.
pub(super) fn load_report() -> LoadReport {
    let corrected = histogram((1..=5000).map(|i| 10_000 + i * 7));
    let uncorrected = histogram((1..=5000).map(|i| 10_000 + i * 3));
    LoadReport {
        schema_version: 1,
        url: "http://127.0.0.1:40000/io?ms=10".to_owned(),
        method: "GET".to_owned(),
        backend: "epoll".to_owned(),
        placement: corobench_model::WindowPlacement::default(),
        threads: 1,
        connections: 64,
        schedule: ScheduleKind::Open { rate_per_s: 500.0 },
        wire: Schedule::open(500.0, 64).with_keepalive(false).wire(),
        warmup_s: 2.0,
        elapsed_s: 10.0,
        requests: 5000,
        requests_per_s: 500.0,
        bytes_read: 640_000,
        bytes_written: 200_000,
        read_bytes_per_s: 64_000.0,
        status: StatusCounts {
            success: 4990,
            server_error: 10,
            ..StatusCounts::default()
        },
        errors: ErrorCounts {
            status_5xx: 10,
            timeout: 2,
            ports_exhausted: 3,
            ..ErrorCounts::default()
        },
        error_rate: 15.0 / 5005.0,
        latency: corrected.report(),
        latency_uncorrected: Some(uncorrected.report()),
        open_loop: Some(OpenLoopReport {
            requested_rate_per_s: 500.0,
            achieved_rate_per_s: 499.8,
            scheduled: 5000,
            sent: 4998,
            mean_send_lag_us: 12.5,
            max_send_lag_us: 900,
            tick_us: Some(50),
        }),
        connect_latency: Some(histogram((1..=5000).map(|i| 50 + i % 40)).report()),
        reconnects: 0,
        generator: GeneratorUsage {
            threads: 1,
            cpu_user_s: 0.4,
            cpu_system_s: 0.6,
            cpu_us_per_request: 200.0,
            utilization: 0.97,
            max_rss_bytes: 8 << 20,
        },
        drain: None,
        ready_s: None,
        kernel_stamps: None,
        timeline: (0..10)
            .map(|second| TimelineSecond {
                second,
                requests: 500,
                errors: u64::from(second % 2),
                bytes_read: 64_000,
                mean_latency_us: 12_345.5,
                max_latency_us: 45_000,
            })
            .collect(),
        warnings: vec![
            LoadWarning::GeneratorBound { utilization: 0.97 },
            LoadWarning::PortsExhausted { failed_connects: 3 },
            LoadWarning::Errors {
                total: 15,
                error_rate: 15.0 / 5005.0,
            },
        ],
        merged: None,
        counters: None,
        probe_mb_per_s: None,
        tls: Some(tls_report()),
        http2: None,
    }
}

/// A closed-loop report of kept-alive connections: no uncorrected
/// histogram, no open-loop section, no connect times.
pub(super) fn closed_load_report() -> LoadReport {
    let mut report = load_report();
    report.schedule = ScheduleKind::Closed;
    report.wire = Schedule::closed(64).with_pipeline(16).wire();
    report.latency_uncorrected = None;
    report.open_loop = None;
    report.connect_latency = None;
    report.warnings.clear();
    report
}

pub(super) fn ok_trial(scenario_index: u32, trial_index: u32, sequence: u32) -> TrialRecord {
    let series: Vec<ResourceSample> = (1..=5)
        .map(|i| ResourceSample {
            t_ms: i * 100,
            cpu_user_pct: 40.0 + f64::from(u32::try_from(i).unwrap()),
            cpu_system_pct: 10.5,
            // The run time travels in the series' JSON.
            cpu_run_pct: Some(50.25),
            rss_bytes: 30 << 20,
            threads: 9,
            processes: 1,
            ctx_voluntary: 1000,
            ctx_involuntary: 20,
        })
        .collect();
    let started_at_unix_ms = 1_763_793_181_000 + i64::from(sequence) * 15_000;
    TrialRecord {
        load: Some(if scenario_index == 1 {
            load_report()
        } else {
            closed_load_report()
        }),
        resources: Some(ResourceSummary {
            samples: 5,
            cpu_pct_mean: 53.5,
            cpu_user_pct_mean: 43.0,
            cpu_system_pct_mean: 10.5,
            rss_mean_bytes: 30 << 20,
            rss_peak_bytes: 31 << 20,
            threads_peak: 9,
            processes_peak: 1,
            ctx_voluntary: 5000,
            ctx_involuntary: 100,
        }),
        resource_series: series,
        tasks: TaskCounts {
            before: Some(12),
            peak: Some(80),
            after: Some(12),
        },
        flags: vec![
            TrialFlag::GeneratorBound { utilization: 0.97 },
            TrialFlag::Leak {
                what: "threads 9 → 12".to_owned(),
            },
        ],
        counters: Some(TrialCounters {
            server: KernelCounts {
                syscalls: Some(2_000_123),
                ctx_switches: Some(40_000),
                minor_faults: Some(12),
                threads: 9,
            },
            generator: KernelCounts {
                syscalls: Some(1_000_456),
                ctx_switches: None,
                minor_faults: Some(3),
                threads: 1,
            },
            missing: vec![MissingCounter {
                side: Side::Generator,
                counter: KernelCounter::ContextSwitches,
                reason: "refused for the test".to_owned(),
            }],
            responses: Some(999_000),
        }),
        probe: Some(corobench_model::MachineProbe {
            server_mb_per_s: 480.5 + f64::from(sequence),
            generator_mb_per_s: 512.25,
        }),
        ..TrialRecord::started(scenario_index, trial_index, sequence, started_at_unix_ms)
    }
}

pub(super) fn failed_trial(scenario_index: u32, trial_index: u32, sequence: u32) -> TrialRecord {
    TrialRecord::started(scenario_index, trial_index, sequence, 1_763_793_181_000)
        .failed("target exited with status 2 before it was healthy: bind: address in use")
}

/// A store holding [`RUN_ID`] with its scenarios and no trials.
pub(super) fn store_with_run() -> (tempfile::TempDir, Store) {
    let (dir, mut store) = temp_store();
    store
        .create_run(
            &run(RUN_ID, 1_763_793_181_000),
            TRIALS_PER_SCENARIO,
            &scenarios(),
        )
        .unwrap();
    (dir, store)
}

/// A TLS block: 40 full and 4,960 resumed handshakes.
fn tls_report() -> corobench_model::TlsReport {
    corobench_model::TlsReport {
        version: Some("TLSv1.3".to_owned()),
        cipher: Some("TLS13_AES_128_GCM_SHA256".to_owned()),
        key_exchange: Some("X25519".to_owned()),
        alpn: Some("http/1.1".to_owned()),
        server_name: None,
        verified: true,
        resumption: true,
        ktls: false,
        provider: "ring".to_owned(),
        full_handshakes: 40,
        resumed_handshakes: 4960,
        handshake: histogram((1..=5000).map(|i| 300 + i % 90)).report(),
    }
}
