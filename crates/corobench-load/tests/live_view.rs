//! The live view's slots against a real in-process server: what the threads
//! publish is the window as they record it, and nothing is published unless
//! a view asks.

mod support;

use std::time::Duration;

use corobench_load::{Http2Options, LiveSnapshot, LoadConfig, LoadReport, LoadRun, StopAfter};
use corobench_testkit::{H2Knobs, Knobs, TestServer, TlsKnobs};
use support::{BACKENDS, config};

#[test]
fn a_live_view_sees_the_window_the_threads_record() {
    for backend in BACKENDS {
        let server = TestServer::start(Knobs::default());
        let load = LoadRun::prepare(LoadConfig {
            threads: 2,
            warmup: Duration::ZERO,
            ..config(
                &server,
                backend,
                4,
                StopAfter::Duration(Duration::from_secs(1)),
            )
        })
        .unwrap()
        .live_view();
        let progress = load.progress();
        let report = load.run().unwrap();
        let live = progress.live().expect("asked for");
        assert_eq!(live.threads_reporting, 2, "{backend:?}");
        assert!(
            live.responses > 0,
            "{backend:?}: published during the window"
        );
        assert!(live.responses <= report.requests, "{backend:?}");
        assert_eq!(live.latency.count(), live.responses, "{backend:?}");
        assert_eq!(live.status.success, live.responses, "{backend:?}");
        assert_eq!(live.errors.total(), 0, "{backend:?}");
        assert!(live.open_connections <= 4, "{backend:?}");
        assert_eq!(
            (live.tls, live.http2),
            (None, None),
            "{backend:?}: cleartext HTTP/1.1"
        );
    }
}

/// A one-second live run from one thread over two connections, without a
/// warm-up, against a test server with `knobs`; `edit` adapts the load.
fn live_run(
    knobs: Knobs,
    edit: impl FnOnce(&mut LoadConfig, &TestServer),
) -> (LiveSnapshot, LoadReport) {
    let server = TestServer::start(knobs);
    let mut config = LoadConfig {
        warmup: Duration::ZERO,
        ..config(
            &server,
            BACKENDS[0],
            2,
            StopAfter::Duration(Duration::from_secs(1)),
        )
    };
    edit(&mut config, &server);
    let load = LoadRun::prepare(config).unwrap().live_view();
    let progress = load.progress();
    let report = load.run().unwrap();
    (progress.live().expect("asked for"), report)
}

#[test]
fn a_live_view_sees_the_handshakes_of_a_tls_run() {
    let knobs = Knobs {
        tls: Some(TlsKnobs::default()),
        ..Knobs::default()
    };
    let (live, report) = live_run(knobs, |config, server| {
        config.schedule = config.schedule.with_keepalive(false);
        let tls = config.endpoint.tls.as_mut().expect("an https:// URL");
        tls.ca_file = server.ca_file().map(ToOwned::to_owned);
    });
    let handshakes = live.tls.expect("a TLS run");
    let reported = report.tls.expect("a TLS report");
    assert!(handshakes.total() > 0, "a handshake per request: {live:?}");
    assert!(handshakes.full <= reported.full_handshakes, "{live:?}");
    assert!(
        handshakes.resumed <= reported.resumed_handshakes,
        "{live:?}"
    );
    assert!(live.http2.is_none(), "HTTP/1.1 over TLS");
}

#[test]
fn a_live_view_sees_the_streams_of_an_h2c_run() {
    let knobs = Knobs {
        http2: Some(H2Knobs::default()),
        ..Knobs::default()
    };
    let (live, report) = live_run(knobs, |config, _| {
        config.http2 = Some(Http2Options {
            streams: 4,
            ..Http2Options::default()
        });
    });
    let streams = live.http2.expect("an HTTP/2 run");
    assert!(
        streams.in_flight_mean > 0.0 && streams.in_flight_mean <= 8.0,
        "at most 4 streams on each of 2 connections: {streams:?}"
    );
    assert_eq!(streams.server_limit, None, "{streams:?}");
    assert_eq!(streams.goaways, 0, "{streams:?}");
    assert_eq!(report.http2.expect("an HTTP/2 report").goaways, 0);
    assert!(live.tls.is_none(), "h2c");
}

#[test]
fn without_a_view_nothing_is_published() {
    let server = TestServer::start(Knobs::default());
    let load = LoadRun::prepare(config(&server, BACKENDS[0], 2, StopAfter::Requests(100))).unwrap();
    let progress = load.progress();
    load.run().unwrap();
    assert!(progress.live().is_none());
    assert_eq!(progress.snapshot().responses, 100);
}
