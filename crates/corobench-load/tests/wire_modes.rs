//! A connection per request and pipelining, on both backends, against the
//! test server: exact counts of requests, responses, accepted connections
//! and failures by kind, never timings.

mod support;

use std::time::Duration;

use corobench_load::{Backend, LoadConfig, LoadReport, Schedule};
use corobench_testkit::{Knobs, TestServer};
use support::{BACKENDS, run, schedule_config};

#[test]
fn a_connection_per_request_opens_one_connection_for_every_request() {
    for backend in BACKENDS {
        let server = TestServer::start(Knobs::default());
        let schedule = Schedule::closed(4).with_keepalive(false);
        let report = run(schedule_config(&server, backend, schedule, 200));
        assert_eq!(report.requests, 200, "{backend:?}");
        assert_eq!(report.errors.total(), 0, "{backend:?}: {:?}", report.errors);
        assert!(!report.wire.keepalive, "{backend:?}");
        let connects = report.connect_latency.as_ref().map(|c| c.summary.count);
        assert_eq!(connects, Some(200), "{backend:?}: one connect per request");
        let counters = server.counters();
        assert_eq!(counters.requests_received, 200, "{backend:?}");
        // The one more is the check that the server is up, before the run.
        assert_eq!(counters.connections_accepted, 201, "{backend:?}");
    }
}

#[test]
fn an_open_loop_opens_a_connection_for_every_arrival() {
    for backend in BACKENDS {
        let server = TestServer::start(Knobs::default());
        let schedule = Schedule::open(2000.0, 8).with_keepalive(false);
        let report = run(schedule_config(&server, backend, schedule, 100));
        assert_eq!(report.requests, 100, "{backend:?}");
        assert_eq!(report.errors.total(), 0, "{backend:?}: {:?}", report.errors);
        assert_eq!(report.open_loop.map(|o| o.sent), Some(100), "{backend:?}");
        assert_eq!(server.counters().connections_accepted, 101, "{backend:?}");
    }
}

#[test]
fn kept_alive_runs_record_no_connect_times() {
    let server = TestServer::start(Knobs::default());
    let report = run(schedule_config(
        &server,
        Backend::Epoll,
        Schedule::closed(2),
        50,
    ));
    assert_eq!(report.requests, 50);
    assert_eq!(report.wire, corobench_model::WireMode::default());
    assert!(report.connect_latency.is_none());
    assert_eq!(server.counters().connections_accepted, 3);
}

#[test]
fn pipelined_request_counts_are_exact_at_every_depth() {
    for backend in BACKENDS {
        for depth in [1, 4, 16] {
            let server = TestServer::start(Knobs::default());
            let schedule = Schedule::closed(4).with_pipeline(depth);
            let report = run(LoadConfig {
                threads: 2,
                ..schedule_config(&server, backend, schedule, 1000)
            });
            let what = format!("{backend:?} at depth {depth}");
            assert_eq!(report.requests, 1000, "{what}");
            assert_eq!(report.status.success, 1000, "{what}");
            assert_eq!(report.errors.total(), 0, "{what}: {:?}", report.errors);
            assert_eq!(report.latency.summary.count, 1000, "{what}");
            assert_eq!(report.wire.pipeline, depth, "{what}");
            let counters = server.counters();
            assert_eq!(counters.requests_received, 1000, "{what}");
            assert_eq!(
                counters.connections_accepted, 5,
                "{what}: connections were kept"
            );
        }
    }
}

#[test]
fn a_server_closing_mid_pipeline_costs_each_unanswered_request() {
    for backend in BACKENDS {
        // Five answers per connection, the fifth with `Connection: close`;
        // the requests pipelined behind it are never answered.
        let server = TestServer::start(Knobs {
            close_after_requests: Some(5),
            ..Knobs::default()
        });
        let schedule = Schedule::closed(1).with_pipeline(16);
        let report = run(schedule_config(&server, backend, schedule, 160));
        let errors = report.errors;
        assert_eq!(
            report.requests + errors.read,
            160,
            "{backend:?}: every request is answered or counted as unanswered: {errors:?}"
        );
        assert!(
            errors.read > 0,
            "{backend:?}: requests were pipelined behind the close"
        );
        assert_eq!(errors.transport(), errors.read, "{backend:?}: {errors:?}");
        assert_eq!(
            report.requests,
            server.counters().responses_sent,
            "{backend:?}: every response sent was counted"
        );
        assert!(report.requests > 0, "{backend:?}");
    }
}

#[test]
fn pipelining_survives_a_slow_reader() {
    // The server takes a few bytes at a time through a small receive
    // buffer, so pipelined writes stay partial (epoll) or are finished by
    // the kernel (io_uring) while responses arrive: no bytes may interleave.
    for backend in BACKENDS {
        let server = TestServer::start(Knobs {
            slow_read: Some(corobench_testkit::SlowRead {
                bytes_per_read: 4096,
                pause: Duration::from_millis(1),
                receive_buffer_bytes: Some(4096),
            }),
            ..Knobs::default()
        });
        let mut config =
            schedule_config(&server, backend, Schedule::closed(2).with_pipeline(16), 400);
        config.request.body = vec![b'x'; 8 * 1024];
        config.request.method = "POST".into();
        let report = run(config);
        assert_eq!(report.requests, 400, "{backend:?}: {:?}", report.errors);
        assert_eq!(report.errors.total(), 0, "{backend:?}");
        assert_eq!(server.counters().requests_received, 400, "{backend:?}");
    }
}

#[test]
fn running_out_of_local_ports_is_counted_not_fatal() {
    // A network namespace of its own for each backend: the ports one left
    // in TIME_WAIT must not be the next one's to find taken (the io_uring
    // run after the epoll one then got none at all, now and then).
    let outcome: Result<Vec<(Backend, LoadReport)>, String> = BACKENDS
        .into_iter()
        .map(|backend| {
            std::thread::spawn(move || {
                isolated_network_with_ports(40_000, 40_009)?;
                let server = TestServer::start(Knobs::default());
                // Twenty connections at once, ten ports (the listener holds one).
                let schedule = Schedule::closed(20).with_keepalive(false);
                Ok((
                    backend,
                    run(schedule_config(&server, backend, schedule, 300)),
                ))
            })
            .join()
            .expect("the test thread ran")
        })
        .collect();
    let reports = match outcome {
        Ok(reports) => reports,
        Err(why) => {
            eprintln!("skipped: cannot narrow the local port range here ({why})");
            return;
        }
    };
    for (backend, report) in reports {
        let errors = report.errors;
        assert!(errors.ports_exhausted > 0, "{backend:?}: {errors:?}");
        assert!(report.requests > 0, "{backend:?}: ports came free again");
        assert_eq!(
            report.requests + errors.transport(),
            300,
            "{backend:?}: exactly n outcomes: {errors:?}"
        );
        assert!(
            report
                .warnings
                .iter()
                .any(|w| w.to_string().contains("net.ipv4.ip_local_port_range")),
            "{backend:?}: {:?}",
            report.warnings
        );
    }
}

/// Moves the calling thread (and the threads it starts) into a new network
/// namespace with loopback up and `low..=high` as its local port range.
fn isolated_network_with_ports(low: u16, high: u16) -> Result<(), String> {
    // SAFETY: unshare affects only the calling thread's namespaces.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(format!(
            "unshare(CLONE_NEWNET): {}",
            std::io::Error::last_os_error()
        ));
    }
    bring_loopback_up().map_err(|e| format!("bringing lo up: {e}"))?;
    std::fs::write(
        "/proc/sys/net/ipv4/ip_local_port_range",
        format!("{low} {high}"),
    )
    .map_err(|e| format!("writing ip_local_port_range: {e}"))
}

fn bring_loopback_up() -> std::io::Result<()> {
    // SAFETY: a plain socket call; the descriptor is closed below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: ifreq is plain data; the name fits with its terminating NUL.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    request.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    // SAFETY: SIOCSIFFLAGS reads the ifreq we own for the duration of the call.
    let rc = unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS, &raw const request) };
    let error = std::io::Error::last_os_error();
    // SAFETY: fd is ours and closed once.
    unsafe { libc::close(fd) };
    if rc == 0 { Ok(()) } else { Err(error) }
}

#[test]
fn kept_alive_connections_the_server_closes_are_counted_as_reconnects() {
    for backend in BACKENDS {
        let closing = TestServer::start(Knobs {
            close_after_requests: Some(10),
            ..Knobs::default()
        });
        let report = run(schedule_config(&closing, backend, Schedule::closed(2), 200));
        assert_eq!(report.requests, 200, "{backend:?}: {:?}", report.errors);
        // Each connection is closed after its 10th answer: 200 answers on
        // 2 connections close them 20 times; the last closes may come
        // after the window's last answer, so not every one reopens in it.
        assert!(
            (18..=20).contains(&report.reconnects),
            "{backend:?}: {} reconnects",
            report.reconnects
        );
        let kept = TestServer::start(Knobs::default());
        let report = run(schedule_config(&kept, backend, Schedule::closed(2), 200));
        assert_eq!(
            report.reconnects, 0,
            "{backend:?}: a server that keeps them open"
        );
    }
}
