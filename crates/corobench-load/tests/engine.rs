//! The engine against real in-process servers, on both backends. Assertions
//! are on counts and on latencies the server itself imposes (a delay, a
//! stall), never on how fast this machine happens to be.

mod support;

use std::time::Duration;

use corobench_load::{
    Backend, Endpoint, LoadConfig, LoadError, LoadReport, RequestTemplate, Schedule, StopAfter,
    limits,
};
use corobench_testkit::{Knobs, SlowRead, Stall, TestServer};
use support::{BACKENDS, config, run};

#[test]
fn request_count_is_exact() {
    for backend in BACKENDS {
        let server = TestServer::start(Knobs::default());
        let report = run(LoadConfig {
            threads: 2,
            ..config(&server, backend, 8, StopAfter::Requests(1000))
        });
        assert_eq!(report.requests, 1000, "{backend:?}");
        assert_eq!(report.status.success, 1000, "{backend:?}");
        assert_eq!(report.errors.total(), 0, "{backend:?}");
        assert_eq!(report.latency.summary.count, 1000, "{backend:?}");
        assert_eq!(
            server.counters().requests_received,
            1000,
            "{backend:?}: the server saw exactly the requests recorded"
        );
    }
}

#[test]
fn warm_up_requests_are_not_counted() {
    // Also in an open loop running far behind its schedule, which sends the
    // requests due during the warm-up after the window opened.
    let behind = Schedule::open(4.0 * limits::MAX_RATE_PER_CONNECTION, 4);
    for schedule in [Schedule::closed(4), behind] {
        let server = TestServer::start(Knobs::default());
        let config = LoadConfig {
            schedule,
            warmup: Duration::from_millis(200),
            ..config(&server, Backend::Epoll, 4, StopAfter::Requests(300))
        };
        let report = run(config);
        assert_eq!(report.requests, 300, "{schedule:?}");
        if let Some(open) = report.open_loop {
            assert_eq!(open.sent, 300, "{schedule:?}");
        }
        assert!(
            server.counters().requests_received > 300,
            "{schedule:?}: the warm-up sent requests too"
        );
    }
}

#[test]
fn a_timed_window_counts_the_requests_it_sent_not_the_warm_ups() {
    // Each answer takes 2 s. The warm-up (1 s) sends one request per
    // connection, answered at 2 s, inside the window (1 s to 3 s) but not
    // counted: it was sent before it. The next ones go out at 2 s, inside
    // the window, and are answered at 4 s, after it closed, while the
    // generator drains: those are the window's. Counting both would report
    // more than three connections allow at 2 s each (Little's law).
    // Margins of a second either way keep this about counting, not timing.
    for backend in BACKENDS {
        let server = TestServer::start(Knobs {
            response_delay: Duration::from_secs(2),
            ..Knobs::default()
        });
        let config = LoadConfig {
            warmup: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
            ..config(
                &server,
                backend,
                3,
                StopAfter::Duration(Duration::from_secs(2)),
            )
        };
        let report = run(config);
        assert_eq!(
            report.requests, 3,
            "{backend:?}: the three requests sent in the window, answered in the drain"
        );
        assert_eq!(report.drain.map(|d| d.responses), Some(3), "{backend:?}");
        let p50_us = report.latency.summary.percentile_us(50.0).unwrap();
        assert!(p50_us >= 2_000_000, "{backend:?}: p50 {p50_us} µs");
    }
}

#[test]
fn a_server_delay_shows_in_the_latency() {
    for backend in BACKENDS {
        let server = TestServer::start(Knobs {
            response_delay: Duration::from_millis(50),
            ..Knobs::default()
        });
        let report = run(config(&server, backend, 4, StopAfter::Requests(40)));
        let p50_us = report.latency.summary.percentile_us(50.0).unwrap();
        assert!(
            p50_us >= 50_000,
            "{backend:?}: p50 {p50_us} µs is below the server's 50 ms delay"
        );
        assert_eq!(report.requests, 40);
    }
}

#[test]
fn open_loop_stall_shows_in_corrected_latency_only() {
    for backend in BACKENDS {
        let stall = Stall {
            after: Duration::from_millis(1500),
            length: Duration::from_secs(1),
        };
        let server = TestServer::start(Knobs {
            stall: Some(stall),
            ..Knobs::default()
        });
        let config = LoadConfig {
            schedule: Schedule::open(1000.0, 10),
            warmup: Duration::from_millis(500),
            ..config(
                &server,
                backend,
                10,
                StopAfter::Duration(Duration::from_secs(4)),
            )
        };
        let report = run(config);
        let corrected = report.latency.summary.percentile_us(99.0).unwrap();
        let uncorrected = report
            .latency_uncorrected
            .as_ref()
            .unwrap()
            .summary
            .percentile_us(99.0)
            .unwrap();
        // About a quarter of the requests were due during the 1 s stall, so
        // measured from their intended send time the slowest percent waited
        // most of that second; measured from the actual send, only the ten
        // requests already in flight did.
        assert!(
            corrected >= 500_000,
            "{backend:?}: corrected p99 {corrected} µs hides the 1 s stall"
        );
        assert!(
            uncorrected * 5 < corrected,
            "{backend:?}: uncorrected p99 {uncorrected} µs vs corrected {corrected} µs"
        );
        let open = report.open_loop.unwrap();
        assert!(
            open.sent > 3000,
            "{backend:?}: the schedule kept sending through the stall ({} sent)",
            open.sent
        );
    }
}

#[test]
fn open_loop_keeps_its_rate() {
    let server = TestServer::start(Knobs::default());
    let config = LoadConfig {
        schedule: Schedule::open(2000.0, 16),
        ..config(&server, Backend::Epoll, 16, StopAfter::Requests(2000))
    };
    let report = run(config);
    let open = report.open_loop.unwrap();
    assert_eq!(report.requests, 2000);
    assert_eq!(open.sent, 2000);
    // One second's worth at 2000/s: the window cannot be shorter than the schedule.
    assert!(report.elapsed_s >= 0.99, "elapsed {}", report.elapsed_s);
}

#[test]
fn every_fault_lands_in_its_counter() {
    type Check = fn(&LoadReport) -> bool;
    let cases: [(&str, Knobs, Check); 6] = [
        (
            "garbage",
            Knobs {
                garbage: true,
                ..Knobs::default()
            },
            |r| r.errors.malformed > 0 && r.requests == 0,
        ),
        (
            "truncated",
            Knobs {
                truncate: true,
                ..Knobs::default()
            },
            |r| r.errors.read > 0 && r.requests == 0,
        ),
        (
            "closed on accept",
            Knobs {
                close_on_accept: true,
                ..Knobs::default()
            },
            |r| r.errors.read + r.errors.write > 0 && r.requests == 0,
        ),
        (
            "status 500",
            Knobs {
                status: 500,
                ..Knobs::default()
            },
            |r| r.errors.status_5xx == r.requests && r.requests > 0,
        ),
        (
            "status 404",
            Knobs {
                status: 404,
                ..Knobs::default()
            },
            |r| r.errors.status_4xx == r.requests && r.requests > 0,
        ),
        (
            "close after 5",
            Knobs {
                close_after_requests: Some(5),
                ..Knobs::default()
            },
            |r| r.errors.total() == 0 && r.requests > 20,
        ),
    ];
    for backend in BACKENDS {
        for (name, knobs, check) in &cases {
            let server = TestServer::start(knobs.clone());
            let report = run(config(
                &server,
                backend,
                4,
                StopAfter::Duration(Duration::from_millis(300)),
            ));
            assert!(
                check(&report),
                "{backend:?} {name}: errors {:?}, {} responses",
                report.errors,
                report.requests
            );
        }
    }
}

#[test]
fn slow_responses_time_out() {
    for backend in BACKENDS {
        let server = TestServer::start(Knobs {
            response_delay: Duration::from_secs(5),
            ..Knobs::default()
        });
        let config = LoadConfig {
            timeout: Duration::from_millis(100),
            ..config(
                &server,
                backend,
                2,
                StopAfter::Duration(Duration::from_millis(500)),
            )
        };
        let report = run(config);
        assert!(
            report.errors.timeout >= 2,
            "{backend:?}: {:?}",
            report.errors
        );
        assert_eq!(report.requests, 0);
    }
}

#[test]
fn chunked_and_large_bodies_are_framed() {
    for backend in BACKENDS {
        let server = TestServer::start(Knobs {
            chunked: true,
            ..Knobs::default()
        });
        let report = run(config(&server, backend, 2, StopAfter::Requests(100)));
        assert_eq!(
            (report.requests, report.errors.total()),
            (100, 0),
            "{backend:?} chunked"
        );

        let size = 1024 * 1024;
        let server = TestServer::start(Knobs {
            body_bytes: Some(size),
            ..Knobs::default()
        });
        let report = run(config(&server, backend, 2, StopAfter::Requests(20)));
        assert_eq!(
            (report.requests, report.errors.total()),
            (20, 0),
            "{backend:?} 1 MiB"
        );
        assert!(report.bytes_read >= 20 * size as u64);
    }
}

#[test]
fn large_request_bodies_survive_a_slow_reader() {
    for backend in BACKENDS {
        let slow = SlowRead {
            bytes_per_read: 64 * 1024,
            pause: Duration::from_millis(1),
            receive_buffer_bytes: Some(4096),
        };
        let server = TestServer::start(Knobs {
            slow_read: Some(slow),
            ..Knobs::default()
        });
        let body = vec![b'x'; 2 * 1024 * 1024];
        let config = LoadConfig {
            request: RequestTemplate {
                method: "POST".into(),
                headers: Vec::new(),
                body,
            },
            ..config(&server, backend, 2, StopAfter::Requests(6))
        };
        let report = run(config);
        assert_eq!(
            (report.requests, report.errors.total()),
            (6, 0),
            "{backend:?}: {:?}",
            report.errors
        );
        assert!(report.bytes_written >= 6 * 2 * 1024 * 1024);
    }
}

#[test]
fn a_refused_connection_is_an_error_before_the_run() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let target = Endpoint::from_url(&format!("http://127.0.0.1:{port}/")).unwrap();
    let error =
        corobench_load::run(LoadConfig::closed(target, 1, Duration::from_millis(100))).unwrap_err();
    assert!(matches!(error, LoadError::Connect { .. }), "{error}");
    assert!(
        error.to_string().contains("is the server running"),
        "{error}"
    );
}

#[test]
fn too_many_connections_for_the_fd_limit_is_explained() {
    let server = TestServer::start(Knobs::default());
    let target = Endpoint::from_url(&server.url("/")).unwrap();
    let error = corobench_load::run(LoadConfig::closed(
        target,
        u32::MAX,
        Duration::from_millis(100),
    ))
    .unwrap_err();
    assert!(matches!(error, LoadError::FdLimit { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains("use at most"), "{message}");
    assert!(message.contains("connections need about"), "{message}");
    // u32::MAX connections are more than any kernel allows one process, so
    // the advice must not be to raise the limit that far.
    assert!(!message.contains("ulimit -n 4294967"), "{message}");
    if let Ok(nr_open) = std::fs::read_to_string("/proc/sys/fs/nr_open") {
        let nr_open = nr_open.trim();
        assert!(
            message.contains(&format!("fs.nr_open = {nr_open}")),
            "{message}"
        );
    }
}

#[test]
fn a_tiny_run_is_never_called_generator_bound() {
    for backend in BACKENDS {
        let server = TestServer::start(Knobs::default());
        let report = run(config(&server, backend, 1, StopAfter::Requests(3)));
        assert_eq!(report.requests, 3, "{backend:?}");
        assert!(
            !report.generator_bound(),
            "{backend:?}: {:?}",
            report.warnings
        );
    }
}

#[test]
fn the_report_is_self_consistent() {
    let server = TestServer::start(Knobs::default());
    let report = run(config(
        &server,
        Backend::Epoll,
        4,
        StopAfter::Duration(Duration::from_millis(500)),
    ));
    let timeline_total: u64 = report.timeline.iter().map(|s| s.requests).sum();
    assert_eq!(timeline_total, report.requests);
    assert_eq!(report.status.total(), report.requests);
    assert!(report.generator.cpu_us_per_request > 0.0);
    assert!(report.generator.max_rss_bytes > 0);
    let json = serde_json::to_string(&report).unwrap();
    let back: LoadReport = serde_json::from_str(&json).unwrap();
    assert_eq!(
        back, report,
        "the JSON form round-trips, histograms included"
    );
}
