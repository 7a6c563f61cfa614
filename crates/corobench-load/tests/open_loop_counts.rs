//! The open loop's counters stay true at any rate the engine accepts, also
//! when the generator cannot keep up: every response counted was received,
//! no more answers than requests sent, and `-n N` ends with exactly N
//! outcomes. Assertions are on counts only, never on how fast this machine is.

mod support;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use corobench_load::limits::{MAX_RATE_PER_CONNECTION, MAX_REQUESTS};
use corobench_load::{Backend, LoadConfig, LoadReport, LoadRun, Schedule, StopAfter};
use corobench_testkit::{Knobs, TestServer};
use support::{BACKENDS, config, run};

/// The fastest schedule `connections` connections may be given: far more
/// than this machine can send, so the generator runs behind all the time.
fn flat_out(connections: u32) -> Schedule {
    Schedule::open(
        MAX_RATE_PER_CONNECTION * f64::from(connections),
        connections,
    )
}

/// A flat-out open loop without warm-up against a fresh server; the server
/// is returned to compare its counters with the report.
fn run_flat_out(
    backend: Backend,
    threads: u32,
    connections: u32,
    stop: StopAfter,
) -> (LoadReport, TestServer) {
    let server = TestServer::start(Knobs::default());
    let report = run(LoadConfig {
        threads,
        schedule: flat_out(connections),
        ..config(&server, backend, connections, stop)
    });
    (report, server)
}

#[test]
fn a_schedule_out_of_reach_still_ends_after_exactly_n() {
    for backend in BACKENDS {
        for (threads, connections, n) in [(1, 1, 3), (2, 4, 500)] {
            let (report, server) =
                run_flat_out(backend, threads, connections, StopAfter::Requests(n));
            let open = report.open_loop.expect("an open-loop report");
            let label = format!("{backend:?} -t {threads} -c {connections} -n {n}");
            assert_eq!(report.requests, n, "{label}");
            assert_eq!(report.errors.total(), 0, "{label}");
            assert_eq!(open.sent, n, "{label}");
            assert_eq!(report.latency.summary.count, n, "{label}");
            assert_eq!(
                server.counters().requests_received,
                n,
                "{label}: the server saw exactly the requests reported"
            );
        }
    }
}

#[test]
fn a_timed_window_never_answers_more_than_it_sent() {
    for backend in BACKENDS {
        let window = StopAfter::Duration(Duration::from_millis(300));
        let (report, server) = run_flat_out(backend, 1, 4, window);
        let open = report.open_loop.expect("an open-loop report");
        let answered = server.counters().responses_sent;
        assert!(report.requests > 0, "{backend:?}: nothing answered");
        assert!(
            open.sent >= report.requests,
            "{backend:?}: {} sent, {} answered",
            open.sent,
            report.requests
        );
        assert!(open.achieved_rate_per_s > 0.0, "{backend:?}");
        assert!(
            report.requests <= answered,
            "{backend:?}: {} counted, {answered} answered by the server",
            report.requests
        );
        let timeline: u64 = report.timeline.iter().map(|s| s.requests).sum();
        assert_eq!(timeline, report.requests, "{backend:?}");
    }
}

/// Waits until `server` has answered `responses`, for at most `limit`.
fn wait_for_responses(server: &TestServer, responses: u64, limit: Duration) {
    let start = Instant::now();
    while server.counters().responses_sent < responses && start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_cancelled_run_reports_what_was_answered() {
    for backend in BACKENDS {
        let server = TestServer::start(Knobs::default());
        let load = LoadRun::prepare(LoadConfig {
            schedule: flat_out(1),
            ..config(&server, backend, 1, StopAfter::Requests(MAX_REQUESTS))
        })
        .expect("the run is accepted");
        let cancel = load.cancel_flag();
        let report = std::thread::scope(|scope| {
            let worker = scope.spawn(move || load.run());
            wait_for_responses(&server, 100, Duration::from_secs(20));
            cancel.store(true, Ordering::Relaxed);
            worker.join().expect("the run ends").expect("the run works")
        });
        let open = report.open_loop.expect("an open-loop report");
        let answered = server.counters().responses_sent;
        // One connection has at most one answer on its way when cancelled.
        assert!(
            report.requests >= 99,
            "{backend:?}: {} counted, {answered} answered",
            report.requests
        );
        assert!(report.requests <= answered, "{backend:?}");
        assert!(open.sent >= report.requests, "{backend:?}");
    }
}
