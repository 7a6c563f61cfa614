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
