//! Kernel receive stamps: the same counts as the generator's own clock,
//! and a clear refusal where the backend cannot give them.

mod support;

use std::time::Duration;

use corobench_load::{Backend, LoadRun, StopAfter};
use corobench_testkit::{Knobs, TestServer};
use support::config;

#[test]
fn kernel_stamped_responses_are_counted_and_timed() {
    let server = TestServer::start(Knobs {
        response_delay: Duration::from_millis(20),
        ..Knobs::default()
    });
    let config = config(&server, Backend::Epoll, 4, StopAfter::Requests(200));
    let report = LoadRun::prepare(config)
        .and_then(|run| run.kernel_stamps(true))
        .and_then(LoadRun::run)
        .expect("the load runs");
    assert!(report.kernel_stamps);
    assert_eq!(report.requests, 200);
    assert_eq!(report.errors.total(), 0);
    let p50_us = report.latency.summary.percentile_us(50.0).unwrap();
    assert!(
        p50_us >= 20_000,
        "p50 {p50_us} µs is below the server's 20 ms delay"
    );
}

#[test]
fn the_io_uring_backend_refuses_kernel_stamps() {
    let server = TestServer::start(Knobs::default());
    let config = config(&server, Backend::IoUring, 1, StopAfter::Requests(1));
    let message = LoadRun::prepare(config)
        .and_then(|run| run.kernel_stamps(true))
        .unwrap_err()
        .to_string();
    assert!(message.contains("--backend epoll"), "{message}");
}
