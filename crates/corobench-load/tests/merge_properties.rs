//! `merge` on generated generator reports: associative, commutative, one
//! report is its own merge, and the merged histogram is exactly the
//! histogram of every recorded latency.

use corobench_load::{MergeInput, merge};
use corobench_model::load::LOAD_REPORT_SCHEMA_VERSION;
use corobench_model::{
    ErrorCounts, GeneratorUsage, LatencyHistogram, LoadReport, LoadWarning, OpenLoopReport,
    ScheduleKind, StatusCounts, TimelineSecond, WindowPlacement, WireMode,
};
use proptest::prelude::*;

/// 2026-11-24T08:00:00Z: the instant every generated generator was asked to start at.
const START_AT_US: u64 = 1_795_507_200_000_000;

/// What one generator recorded, from which its report is made the way
/// `corobench load` makes one.
#[derive(Clone, Debug)]
struct Recorded {
    /// Distinct per generator, so no two are the same report.
    index: u64,
    start_jitter_us: u64,
    host: u8,
    elapsed_s: f64,
    /// `(second of the window, latency)` per response.
    responses: Vec<(u8, u64)>,
    timeouts: u64,
    cpu_user_s: f64,
    threads: u32,
}

fn recorded(index: u64) -> impl Strategy<Value = Recorded> {
    (
        0u64..1_000,
        0u8..3,
        prop::sample::select(vec![1.0, 1.5, 2.0]),
        prop::collection::vec((0u8..2, 1u64..5_000_000), 0..60),
        0u64..4,
        0.0f64..2.0,
        1u32..4,
    )
        .prop_map(
            move |(jitter, host, elapsed_s, responses, timeouts, cpu_user_s, threads)| Recorded {
                index,
                start_jitter_us: jitter,
                host,
                elapsed_s,
                responses,
                timeouts,
                cpu_user_s,
                threads,
            },
        )
}

fn histogram(latencies: impl IntoIterator<Item = u64>) -> LatencyHistogram {
    let mut histogram = LatencyHistogram::new();
    for latency in latencies {
        histogram.record_us(latency);
    }
    histogram
}

fn timeline(responses: &[(u8, u64)]) -> Vec<TimelineSecond> {
    let seconds = responses
        .iter()
        .map(|(s, _)| usize::from(*s) + 1)
        .max()
        .unwrap_or(0);
    (0..seconds)
        .map(|second| {
            let latencies: Vec<u64> = responses
                .iter()
                .filter(|(s, _)| usize::from(*s) == second)
                .map(|(_, l)| *l)
                .collect();
            let requests = latencies.len() as u64;
            TimelineSecond {
                second: second as u32,
                requests,
                errors: 0,
                bytes_read: requests * 100,
                mean_latency_us: if requests == 0 {
                    0.0
                } else {
                    latencies.iter().sum::<u64>() as f64 / requests as f64
                },
                max_latency_us: latencies.iter().copied().max().unwrap_or(0),
            }
        })
        .collect()
}

/// The report `corobench load` would have written, open loop or closed.
fn report(rec: &Recorded, open: bool) -> LoadReport {
    let latency = histogram(rec.responses.iter().map(|(_, l)| *l));
    let requests = rec.responses.len() as u64;
    let errors = ErrorCounts {
        timeout: rec.timeouts,
        ..ErrorCounts::default()
    };
    let rate_per_s = 1_000.0 + rec.index as f64;
    let open_loop = open.then(|| OpenLoopReport {
        requested_rate_per_s: rate_per_s,
        achieved_rate_per_s: requests as f64 / rec.elapsed_s,
        scheduled: requests + rec.timeouts,
        sent: requests + rec.timeouts,
        mean_send_lag_us: 3.0 + rec.index as f64 / 7.0,
        max_send_lag_us: 40 + rec.index,
        tick_us: None,
    });
    let window_start = START_AT_US + rec.index * 1_000 + rec.start_jitter_us;
    let mut report = LoadReport {
        schema_version: LOAD_REPORT_SCHEMA_VERSION,
        url: "http://127.0.0.1:8080/plaintext".into(),
        method: "GET".into(),
        backend: if rec.index % 2 == 0 {
            "epoll"
        } else {
            "io_uring"
        }
        .into(),
        placement: WindowPlacement {
            host: Some(format!("gen{}", rec.host)),
            window_start_unix_us: Some(window_start),
            start_at_unix_us: Some(START_AT_US),
            start_offset_us: Some(WindowPlacement::offset_us(window_start, START_AT_US)),
        },
        threads: rec.threads,
        connections: rec.threads * 8,
        schedule: if open {
            ScheduleKind::Open { rate_per_s }
        } else {
            ScheduleKind::Closed
        },
        wire: WireMode::default(),
        warmup_s: 0.5,
        elapsed_s: rec.elapsed_s,
        requests,
        requests_per_s: requests as f64 / rec.elapsed_s,
        bytes_read: requests * 100,
        bytes_written: requests * 40,
        read_bytes_per_s: (requests * 100) as f64 / rec.elapsed_s,
        status: StatusCounts {
            success: requests,
            ..StatusCounts::default()
        },
        errors,
        error_rate: errors.rate(requests),
        latency: latency.report(),
        latency_uncorrected: open.then(|| latency.report()),
        open_loop,
        connect_latency: None,
        reconnects: 0,
        generator: usage(rec, requests),
        drain: None,
        ready_s: None,
        kernel_stamps: None,
        timeline: timeline(&rec.responses),
        warnings: Vec::new(),
        merged: None,
        counters: None,
        probe_mb_per_s: None,
        tls: None,
        http2: None,
    };
    report.warnings = warnings(&report);
    report
}

/// The generator's cost, worked out as `corobench load` does.
fn usage(rec: &Recorded, requests: u64) -> GeneratorUsage {
    let cpu_s = rec.cpu_user_s + 0.25;
    GeneratorUsage {
        threads: rec.threads,
        cpu_user_s: rec.cpu_user_s,
        cpu_system_s: 0.25,
        cpu_us_per_request: if requests == 0 {
            0.0
        } else {
            cpu_s * 1e6 / requests as f64
        },
        utilization: cpu_s / (rec.elapsed_s * f64::from(rec.threads)),
        max_rss_bytes: 1 << 20,
    }
}

fn warnings(report: &LoadReport) -> Vec<LoadWarning> {
    let mut warnings = Vec::new();
    if report.generator.utilization >= 0.9 {
        warnings.push(LoadWarning::GeneratorBound {
            utilization: report.generator.utilization,
        });
    }
    if report.errors.total() > 0 {
        warnings.push(LoadWarning::Errors {
            total: report.errors.total(),
            error_rate: report.error_rate,
        });
    }
    warnings
}

fn source(report: &LoadReport) -> String {
    let start = report.placement.window_start_unix_us.unwrap_or(0);
    format!("gen-{start}.json")
}

fn merged(reports: &[&LoadReport]) -> LoadReport {
    let sources: Vec<String> = reports.iter().map(|r| source(r)).collect();
    let inputs: Vec<MergeInput<'_>> = reports
        .iter()
        .zip(&sources)
        .map(|(report, source)| MergeInput { source, report })
        .collect();
    merge(&inputs).expect("generated reports overlap and match")
}

fn three_reports() -> impl Strategy<Value = (LoadReport, LoadReport, LoadReport)> {
    (any::<bool>(), recorded(0), recorded(1), recorded(2))
        .prop_map(|(open, a, b, c)| (report(&a, open), report(&b, open), report(&c, open)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn merge_is_commutative((a, b, c) in three_reports()) {
        prop_assert_eq!(merged(&[&a, &b]), merged(&[&b, &a]));
        prop_assert_eq!(merged(&[&a, &b, &c]), merged(&[&c, &a, &b]));
    }

    #[test]
    fn merge_is_associative((a, b, c) in three_reports()) {
        let left = merged(&[&merged(&[&a, &b]), &c]);
        let right = merged(&[&a, &merged(&[&b, &c])]);
        prop_assert_eq!(&left, &right);
        prop_assert_eq!(&left, &merged(&[&a, &b, &c]));
    }

    #[test]
    fn merging_one_report_gives_it_back((a, _, _) in three_reports()) {
        prop_assert_eq!(merged(&[&a]), a);
    }

    #[test]
    fn a_merged_report_survives_json((a, b, c) in three_reports()) {
        let merged = merged(&[&a, &b, &c]);
        let text = serde_json::to_string(&merged).unwrap();
        let back: LoadReport = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, merged);
    }
}

/// The merged histogram is the histogram of all latencies recorded by all
/// generators, bucket for bucket; counts and the timeline add up.
#[test]
fn the_merged_histogram_is_that_of_every_recorded_latency() {
    let generators: Vec<Recorded> = (0..4)
        .map(|index| Recorded {
            index,
            start_jitter_us: 400 * index,
            host: u8::try_from(index).unwrap(),
            elapsed_s: 2.0,
            responses: (1..=500)
                .map(|i| {
                    (
                        u8::from(i % 3 == 0),
                        i * i * (index + 1) * 37 % 9_000_000 + 1,
                    )
                })
                .collect(),
            timeouts: index,
            cpu_user_s: 0.5,
            threads: 2,
        })
        .collect();
    let reports: Vec<LoadReport> = generators.iter().map(|g| report(g, false)).collect();
    let merged = merged(&reports.iter().collect::<Vec<_>>());
    let every_latency = generators
        .iter()
        .flat_map(|g| g.responses.iter().map(|(_, l)| *l));
    assert_eq!(merged.latency.histogram, histogram(every_latency));
    assert_eq!(merged.requests, 2_000);
    assert_eq!(merged.errors.timeout, 6);
    let timeline_requests: u64 = merged.timeline.iter().map(|s| s.requests).sum();
    assert_eq!(timeline_requests, 2_000);
    let detail = merged.merged.expect("four generators leave their detail");
    assert_eq!(detail.generators.len(), 4);
    assert_eq!(detail.timeline_start_unix_s, START_AT_US / 1_000_000);
    assert_eq!(merged.generator.threads, 8);
    assert!((merged.generator.cpu_user_s - 2.0).abs() < 1e-12);
}

fn sample(index: u64, elapsed_s: f64) -> LoadReport {
    report(
        &Recorded {
            index,
            start_jitter_us: 0,
            host: 0,
            elapsed_s,
            responses: vec![(0, 100 + index)],
            timeouts: 0,
            cpu_user_s: 0.1,
            threads: 1,
        },
        false,
    )
}

fn refusal(reports: &[(&str, &LoadReport)]) -> String {
    let inputs: Vec<MergeInput<'_>> = reports
        .iter()
        .map(|(source, report)| MergeInput { source, report })
        .collect();
    merge(&inputs).expect_err("refused").to_string()
}

#[test]
fn reports_that_cannot_be_merged_are_refused_with_the_reason() {
    let a = sample(0, 1.0);
    let mut later = sample(1, 1.0);
    later.placement.window_start_unix_us = Some(START_AT_US + 3_000_000);
    let mut other_url = sample(2, 1.0);
    other_url.url = "http://127.0.0.1:8080/json".into();
    let mut open = sample(3, 1.0);
    open.schedule = ScheduleKind::Open { rate_per_s: 10.0 };
    let mut old = sample(4, 1.0);
    old.placement = WindowPlacement::default();
    let mut uncorrected = sample(5, 1.0);
    uncorrected.latency_uncorrected = Some(uncorrected.latency.clone());
    let cases: [(&[(&str, &LoadReport)], &str); 7] = [
        (&[], "no reports to merge"),
        (
            &[("a.json", &a), ("b.json", &later)],
            "b.json began measuring 2.000s after a.json stopped",
        ),
        (
            &[("a.json", &a), ("c.json", &other_url)],
            "differ in their URL",
        ),
        (
            &[("a.json", &a), ("d.json", &open)],
            "differ in their schedule (open loop vs closed loop)",
        ),
        (
            &[("a.json", &a), ("e.json", &old)],
            "e.json does not say when its measured window began",
        ),
        (
            &[("a.json", &a), ("copy.json", &a)],
            "a.json and copy.json are the same generator report",
        ),
        (
            &[("a.json", &a), ("f.json", &uncorrected)],
            "f.json has an uncorrected latency histogram and a.json has none",
        ),
    ];
    for (reports, expected) in cases {
        let message = refusal(reports);
        assert!(message.contains(expected), "{message}");
    }
}

#[test]
fn windows_that_overlap_in_part_are_merged_with_a_warning() {
    let a = sample(0, 2.0);
    let mut b = sample(1, 2.0);
    b.placement.window_start_unix_us = Some(START_AT_US + 1_000_000);
    let merged = merged(&[&a, &b]);
    assert!(
        (merged.elapsed_s - 1.0).abs() < 1e-9,
        "{}",
        merged.elapsed_s
    );
    assert_eq!(
        merged.placement.window_start_unix_us,
        Some(START_AT_US + 1_000_000)
    );
    assert_eq!(merged.placement.start_offset_us, Some(1_000_000));
    assert!(
        merged.warnings.iter().any(
            |w| matches!(w, LoadWarning::PartialOverlap { common_s, span_s }
                if (*common_s - 1.0).abs() < 1e-9 && (*span_s - 3.0).abs() < 1e-9)
        ),
        "{:?}",
        merged.warnings
    );
    // b's first second is the wall-clock second after a's.
    assert_eq!(merged.timeline.len(), 2);
    assert_eq!(
        (merged.timeline[0].requests, merged.timeline[1].requests),
        (1, 1)
    );
}

/// Issue "wrong successes", item 4: a crafted report whose window began in
/// 1970 and lasted 1.9e9 s overlapped every other one, and merging them
/// allocated a timeline of 71 GB. Sizes are bounded before allocating.
#[test]
fn a_report_with_an_impossible_window_is_refused_before_allocating() {
    let a = sample(0, 1.0);
    let mut crafted = sample(1, 1.9e9);
    crafted.placement.window_start_unix_us = Some(1);
    let message = refusal(&[("a.json", &a), ("crafted.json", &crafted)]);
    assert!(
        message.contains(
            "crafted.json: its measured window (elapsed_s) is 1900000000s, beyond 86400s"
        ),
        "{message}"
    );
    // A merged report whose timeline is said to start in 2096.
    let mut merged_detail = merged(&[&sample(2, 1.0), &sample(3, 1.0)]);
    merged_detail
        .merged
        .as_mut()
        .expect("a merged report")
        .timeline_start_unix_s = 4_000_000_000;
    let message = refusal(&[("a.json", &a), ("merged.json", &merged_detail)]);
    assert!(
        message.contains("merged.json: its timeline, placed by its window start"),
        "{message}"
    );
    let mut negative = sample(4, 1.0);
    negative.elapsed_s = f64::NAN;
    let message = refusal(&[("a.json", &a), ("nan.json", &negative)]);
    assert!(message.contains("nan.json: elapsed_s is NaN"), "{message}");
}

#[test]
fn the_generators_kernel_counters_add_up_when_every_one_counted() {
    use corobench_model::{KernelCounter, KernelCounts, MissingCounter, Side, SideCounters};
    let counted = |syscalls: Option<u64>, why: &str| SideCounters {
        counts: KernelCounts {
            syscalls,
            ctx_switches: Some(5),
            minor_faults: Some(1),
            threads: 2,
        },
        missing: syscalls
            .is_none()
            .then(|| MissingCounter {
                side: Side::Generator,
                counter: KernelCounter::Syscalls,
                reason: why.to_owned(),
            })
            .into_iter()
            .collect(),
        responses: Some(100),
    };
    let mut a = sample(0, 1.0);
    a.counters = Some(counted(Some(300), ""));
    let mut b = sample(1, 1.0);
    b.counters = Some(counted(None, "paranoid"));
    let both = merged(&[&a, &b]).counters.expect("both counted");
    assert_eq!(both, merged(&[&b, &a]).counters.unwrap());
    assert_eq!(
        (
            both.counts.syscalls,
            both.counts.ctx_switches,
            both.counts.threads
        ),
        (None, Some(10), 4)
    );
    assert_eq!(both.missing.len(), 1);
    assert_eq!(both.responses, Some(200));
    assert_eq!(merged(&[&a]), a, "one report comes back unchanged");
    (a.probe_mb_per_s, b.probe_mb_per_s) = (Some(100.0), Some(300.0));
    assert_eq!(merged(&[&a, &b]).probe_mb_per_s, Some(200.0), "the mean");
    b.probe_mb_per_s = None;
    assert_eq!(merged(&[&a, &b]).probe_mb_per_s, None, "b did not probe");
    b.counters = None;
    assert_eq!(merged(&[&a, &b]).counters, None, "b counted nothing");
}
