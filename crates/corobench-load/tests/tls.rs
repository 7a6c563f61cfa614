//! The engine over TLS against the test kit's HTTPS server, on both
//! backends and every schedule: exact counts of requests, handshakes
//! (full and resumed) and failures by kind, never timings.

mod support;

use corobench_load::{Backend, LoadConfig, LoadReport, Schedule, TlsOptions};
use corobench_model::TlsReport;
use corobench_testkit::{Knobs, TestServer, TlsKnobs};
use support::{BACKENDS, run, schedule_config};

/// An HTTPS test server with these TLS knobs.
fn https(tls: TlsKnobs) -> TestServer {
    TestServer::start(Knobs {
        tls: Some(tls),
        ..Knobs::default()
    })
}

/// `schedule` against `server`, trusting its CA, stopping after `requests`.
fn tls_config(
    server: &TestServer,
    backend: Backend,
    schedule: Schedule,
    requests: u64,
    edit: impl FnOnce(&mut TlsOptions),
) -> LoadConfig {
    let mut config = schedule_config(server, backend, schedule, requests);
    let options = config.endpoint.tls.as_mut().expect("an https:// URL");
    options.ca_file = server.ca_file().map(ToOwned::to_owned);
    edit(options);
    config
}

fn tls_of(report: &LoadReport) -> &TlsReport {
    report.tls.as_ref().expect("a TLS report")
}

/// Every schedule the engine has, with `connections` connections.
fn schedules(connections: u32) -> [(&'static str, Schedule); 4] {
    [
        ("closed loop", Schedule::closed(connections)),
        ("open loop", Schedule::open(2000.0, connections)),
        (
            "a connection per request",
            Schedule::closed(connections).with_keepalive(false),
        ),
        ("pipelining", Schedule::closed(connections).with_pipeline(4)),
    ]
}

#[test]
fn every_schedule_runs_over_tls_on_both_backends() {
    for backend in BACKENDS {
        for (name, schedule) in schedules(4) {
            let server = https(TlsKnobs::default());
            let report = run(tls_config(&server, backend, schedule, 200, |_| {}));
            let at = format!("{backend:?}, {name}");
            assert_eq!(report.requests, 200, "{at}");
            assert_eq!(report.status.success, 200, "{at}");
            assert_eq!(report.errors.total(), 0, "{at}: {:?}", report.errors);
            assert_eq!(server.counters().requests_received, 200, "{at}");
            let tls = tls_of(&report);
            assert_eq!(tls.version.as_deref(), Some("TLSv1.3"), "{at}");
            assert_eq!(tls.alpn, None, "{at}: the server serves no ALPN");
            assert!(tls.verified && tls.resumption, "{at}");
            assert_eq!(
                tls.handshake.summary.count,
                tls.handshakes(),
                "{at}: one handshake time per handshake"
            );
            let connects = report.connect_latency.as_ref().map(|c| c.summary.count);
            assert_eq!(
                connects,
                Some(tls.handshakes()),
                "{at}: a connect per handshake"
            );
            if !schedule.keepalive {
                assert_eq!(tls.handshakes(), 200, "{at}: a handshake per request");
            }
        }
    }
}

#[test]
fn a_connection_per_request_resumes_sessions_unless_told_not_to() {
    for backend in BACKENDS {
        let schedule = Schedule::closed(1).with_keepalive(false);
        let server = https(TlsKnobs::default());
        let report = run(tls_config(&server, backend, schedule, 20, |_| {}));
        let tls = tls_of(&report);
        assert_eq!(
            (tls.full_handshakes, tls.resumed_handshakes),
            (1, 19),
            "{backend:?}: one connection at a time resumes the session before it"
        );
        let report = run(tls_config(&server, backend, schedule, 20, |o| {
            o.resumption = false;
        }));
        let tls = tls_of(&report);
        assert!(!tls.resumption, "{backend:?}");
        assert_eq!(
            (tls.full_handshakes, tls.resumed_handshakes),
            (20, 0),
            "{backend:?}"
        );
    }
}

#[test]
fn tls_1_2_resumes_too_and_alpn_is_reported_when_agreed() {
    for backend in BACKENDS {
        let server = https(TlsKnobs {
            only_version: Some(12),
            alpn: vec!["http/1.1".into()],
            ..TlsKnobs::default()
        });
        let schedule = Schedule::closed(1).with_keepalive(false);
        let report = run(tls_config(&server, backend, schedule, 10, |_| {}));
        let tls = tls_of(&report);
        assert_eq!(report.requests, 10, "{backend:?}");
        assert_eq!(tls.version.as_deref(), Some("TLSv1.2"), "{backend:?}");
        assert_eq!(tls.alpn.as_deref(), Some("http/1.1"), "{backend:?}");
        assert_eq!(
            (tls.full_handshakes, tls.resumed_handshakes),
            (1, 9),
            "{backend:?}"
        );
    }
}

#[test]
fn handshakes_of_the_warm_up_are_not_the_window_s() {
    let server = https(TlsKnobs::default());
    let mut config = tls_config(&server, Backend::Epoll, Schedule::closed(3), 100, |_| {});
    config.warmup = std::time::Duration::from_millis(300);
    let report = run(config);
    let tls = tls_of(&report);
    assert_eq!(
        tls.handshakes(),
        0,
        "every connection opened during the warm-up"
    );
    assert_eq!(tls.handshake.summary.count, 0);
    assert!(
        tls.version.is_some(),
        "what was agreed is known all the same"
    );
}

#[test]
fn merging_tls_reports_adds_their_handshakes_exactly() {
    use corobench_load::{MergeInput, merge};
    let server = https(TlsKnobs::default());
    let schedule = Schedule::closed(2).with_keepalive(false);
    // Two generators at the same time, so that their windows overlap.
    let timed = |backend| {
        let mut config = tls_config(&server, backend, schedule, 1, |_| {});
        config.stop = corobench_load::StopAfter::Duration(std::time::Duration::from_millis(500));
        config
    };
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| run(timed(Backend::Epoll)));
        let b = scope.spawn(|| run(timed(Backend::IoUring)));
        (a.join().unwrap(), b.join().unwrap())
    });
    let merged = merge(&[
        MergeInput {
            source: "a.json",
            report: &a,
        },
        MergeInput {
            source: "b.json",
            report: &b,
        },
    ])
    .expect("reports of one load merge");
    let (ta, tb, tm) = (tls_of(&a), tls_of(&b), tls_of(&merged));
    assert_eq!(tm.full_handshakes, ta.full_handshakes + tb.full_handshakes);
    assert_eq!(
        tm.resumed_handshakes,
        ta.resumed_handshakes + tb.resumed_handshakes
    );
    let mut sum = ta.handshake.histogram.clone();
    sum.add(&tb.handshake.histogram);
    assert_eq!(tm.handshake.histogram, sum, "bucket by bucket");
    assert_eq!(
        tm.handshake.summary.count,
        ta.handshake.summary.count + tb.handshake.summary.count
    );
    assert_eq!(tm.version, ta.version);
    let c = run(tls_config(&server, Backend::Epoll, schedule, 40, |o| {
        o.resumption = false;
    }));
    let refused = merge(&[
        MergeInput {
            source: "a.json",
            report: &a,
        },
        MergeInput {
            source: "c.json",
            report: &c,
        },
    ])
    .unwrap_err()
    .to_string();
    assert!(
        refused.contains("TLS settings") && refused.contains("resumption off"),
        "{refused}"
    );
}
