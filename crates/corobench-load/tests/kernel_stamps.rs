//! Kernel receive stamps: the same counts as the generator's own clock,
//! on both backends, with latencies the server imposes.

mod support;

use std::time::Duration;

use corobench_load::{Backend, LoadError, LoadRun, Setting, StopAfter};
use corobench_testkit::{Knobs, TestServer};
use support::{BACKENDS, config};

#[test]
fn kernel_stamped_responses_are_counted_and_timed() {
    for backend in BACKENDS {
        let server = TestServer::start(Knobs {
            response_delay: Duration::from_millis(20),
            ..Knobs::default()
        });
        let config = config(&server, backend, 4, StopAfter::Requests(200));
        let report = LoadRun::prepare(config)
            .and_then(|run| run.kernel_stamps(true)?.run())
            .expect("the load runs");
        let stamps = report.kernel_stamps.expect("the report says it stamped");
        assert!(
            stamps.stamped > 0 && stamps.stamped <= report.requests,
            "{backend:?}: {stamps:?}"
        );
        assert!(stamps.max_read_delay_us as f64 >= stamps.mean_read_delay_us);
        assert_eq!(report.requests, 200, "{backend:?}");
        assert_eq!(report.errors.total(), 0, "{backend:?}: {:?}", report.errors);
        let p50_us = report.latency.summary.percentile_us(50.0).unwrap();
        assert!(
            p50_us >= 20_000,
            "{backend:?}: p50 {p50_us} µs is below the server's 20 ms delay"
        );
    }
}

#[test]
fn large_stamped_responses_are_framed_whole() {
    // Bodies larger than one provided buffer arrive in several receives,
    // each with its own header and stamp in front of its bytes.
    for backend in BACKENDS {
        let server = TestServer::start(Knobs {
            body_bytes: Some(100_000),
            ..Knobs::default()
        });
        let config = config(&server, backend, 2, StopAfter::Requests(50));
        let report = LoadRun::prepare(config)
            .and_then(|run| run.kernel_stamps(true)?.run())
            .expect("the load runs");
        assert_eq!(
            report.status.success, 50,
            "{backend:?}: {:?}",
            report.errors
        );
        assert!(report.bytes_read >= 50 * 100_000, "{backend:?}");
    }
}

#[test]
fn send_stamps_time_requests_from_the_kernels_send_on_epoll() {
    let server = TestServer::start(Knobs {
        response_delay: Duration::from_millis(20),
        ..Knobs::default()
    });
    let config = config(&server, Backend::Epoll, 4, StopAfter::Requests(200));
    let report = LoadRun::prepare(config)
        .and_then(|run| run.kernel_stamps(true)?.kernel_send_stamps(true)?.run())
        .expect("the load runs");
    let stamps = report.kernel_stamps.expect("the report says it stamped");
    assert!(stamps.send, "{stamps:?}");
    assert_eq!(report.requests, 200);
    assert_eq!(report.errors.total(), 0, "{:?}", report.errors);
    let p50_us = report.latency.summary.percentile_us(50.0).unwrap();
    assert!(
        p50_us >= 20_000,
        "p50 {p50_us} µs is below the server's 20 ms delay"
    );
}

#[test]
fn send_stamps_need_receive_stamps_and_the_epoll_backend() {
    let server = TestServer::start(Knobs::default());
    let alone = LoadRun::prepare(config(&server, Backend::Epoll, 1, StopAfter::Requests(1)))
        .and_then(|run| run.kernel_send_stamps(true))
        .unwrap_err();
    assert!(
        matches!(&alone, LoadError::Config { settings, .. } if settings.contains(&Setting::KernelStamps)),
        "{alone}"
    );
    assert!(
        alone.to_string().contains("come with receive stamps"),
        "{alone}"
    );
    let uring = LoadRun::prepare(config(&server, Backend::IoUring, 1, StopAfter::Requests(1)))
        .and_then(|run| run.kernel_stamps(true))
        .and_then(|run| run.kernel_send_stamps(true));
    // A kernel older than 6.0 refuses io_uring receive stamps first.
    let error = uring.unwrap_err();
    assert!(
        matches!(&error, LoadError::Config { settings, .. } if settings.contains(&Setting::Backend)),
        "{error}"
    );
    assert!(error.to_string().contains("epoll backend"), "{error}");
}
