//! The engine over HTTP/2 against the test kit's h2 and h2c server, on both
//! backends and every schedule: exact counts of requests and failures by
//! kind, the streams the server allowed, never timings.

mod support;

use std::time::Duration;

use corobench_load::{
    Backend, Http2Options, LoadConfig, LoadError, LoadReport, LoadRun, RequestTemplate, Schedule,
    Setting, StopAfter,
};
use corobench_model::Http2Report;
use corobench_testkit::{ContractConfig, ContractServer, H2Knobs, Knobs, TestServer, TlsKnobs};
use support::{BACKENDS, run, schedule_config};

/// An h2c server (h2 over TLS with `tls`) with these HTTP/2 knobs.
fn h2_server(h2: H2Knobs, tls: bool, knobs: Knobs) -> TestServer {
    TestServer::start(Knobs {
        http2: Some(h2),
        tls: tls.then(|| TlsKnobs {
            alpn: vec!["h2".to_owned()],
            ..TlsKnobs::default()
        }),
        ..knobs
    })
}

/// `schedule` over HTTP/2 with `streams` per connection, stopping after `requests`.
fn h2_config(
    server: &TestServer,
    backend: Backend,
    schedule: Schedule,
    (streams, requests): (u32, u64),
) -> LoadConfig {
    let mut config = schedule_config(server, backend, schedule, requests);
    if let Some(tls) = config.endpoint.tls.as_mut() {
        tls.ca_file = server.ca_file().map(ToOwned::to_owned);
    }
    config.http2 = Some(Http2Options {
        streams,
        ..Http2Options::default()
    });
    config
}

fn http2_of(report: &LoadReport) -> &Http2Report {
    report.http2.as_ref().expect("an HTTP/2 report")
}

/// Every schedule HTTP/2 runs, with `connections` connections.
fn schedules(connections: u32) -> [(&'static str, Schedule); 3] {
    [
        ("closed loop", Schedule::closed(connections)),
        ("open loop", Schedule::open(3000.0, connections)),
        (
            "a connection per request",
            Schedule::closed(connections).with_keepalive(false),
        ),
    ]
}

#[test]
fn every_schedule_runs_over_h2_and_h2c_on_both_backends() {
    for tls in [false, true] {
        for backend in BACKENDS {
            for (name, schedule) in schedules(2) {
                let server = h2_server(H2Knobs::default(), tls, Knobs::default());
                let report = run(h2_config(&server, backend, schedule, (8, 300)));
                let at = format!("tls {tls}, {backend:?}, {name}");
                assert_eq!(report.requests, 300, "{at}");
                assert_eq!(report.status.success, 300, "{at}");
                assert_eq!(report.errors.total(), 0, "{at}: {:?}", report.errors);
                assert_eq!(server.counters().requests_received, 300, "{at}");
                let http2 = http2_of(&report);
                assert_eq!(http2.protocol, if tls { "h2" } else { "h2c" }, "{at}");
                assert_eq!(http2.streams_per_connection, 8, "{at}");
                assert_eq!(http2.streams_effective, 8, "{at}: no server limit");
                assert_eq!(http2.goaways, 0, "{at}");
                let most = if schedule.keepalive { 8 } else { 1 };
                assert!(http2.streams_in_flight_max <= most, "{at}: {http2:?}");
                if tls {
                    let alpn = report.tls.as_ref().and_then(|t| t.alpn.clone());
                    assert_eq!(alpn.as_deref(), Some("h2"), "{at}");
                }
            }
        }
    }
}

#[test]
fn a_closed_loop_keeps_every_stream_of_every_connection_busy() {
    for backend in BACKENDS {
        // A response delay keeps every stream in flight long enough to be seen.
        let server = h2_server(
            H2Knobs::default(),
            false,
            Knobs {
                response_delay: Duration::from_millis(20),
                ..Knobs::default()
            },
        );
        let report = run(h2_config(&server, backend, Schedule::closed(2), (10, 200)));
        assert_eq!(report.requests, 200, "{backend:?}");
        let http2 = http2_of(&report);
        assert_eq!(http2.streams_in_flight_max, 10, "{backend:?}: {http2:?}");
        assert!(
            http2.streams_in_flight_mean > 1.0,
            "{backend:?}: streams really ran at once: {http2:?}"
        );
    }
}

#[test]
fn a_server_limit_of_one_stream_lowers_the_streams_and_says_so() {
    for backend in BACKENDS {
        let server = h2_server(
            H2Knobs {
                max_concurrent_streams: Some(1),
                ..H2Knobs::default()
            },
            false,
            Knobs::default(),
        );
        let report = run(h2_config(&server, backend, Schedule::closed(2), (16, 200)));
        assert_eq!(report.requests, 200, "{backend:?}");
        assert_eq!(report.errors.total(), 0, "{backend:?}: {:?}", report.errors);
        let http2 = http2_of(&report);
        assert_eq!(http2.server_max_concurrent_streams, Some(1), "{backend:?}");
        assert_eq!(http2.streams_effective, 1, "{backend:?}");
        assert_eq!(http2.streams_in_flight_max, 1, "{backend:?}: {http2:?}");
    }
}

#[test]
fn goaway_every_few_requests_reconnects_and_counts_them() {
    for backend in BACKENDS {
        let server = h2_server(
            H2Knobs {
                goaway_every: Some(10),
                ..H2Knobs::default()
            },
            false,
            Knobs::default(),
        );
        let report = run(h2_config(&server, backend, Schedule::closed(1), (4, 200)));
        let at = format!("{backend:?}");
        let http2 = http2_of(&report);
        assert!(http2.goaways > 0, "{at}: {http2:?}");
        assert!(
            server.counters().connections_accepted > 1,
            "{at}: it reconnected"
        );
        let errors = report.errors;
        assert_eq!(
            errors.total(),
            errors.refused_stream,
            "{at}: streams beyond a GOAWAY are refused, nothing else fails: {errors:?}"
        );
        assert_eq!(report.requests + errors.refused_stream, 200, "{at}");
    }
}

#[test]
fn a_huge_header_block_is_decoded() {
    for backend in BACKENDS {
        let server = h2_server(
            H2Knobs {
                header_bytes: 100_000,
                ..H2Knobs::default()
            },
            false,
            Knobs::default(),
        );
        let report = run(h2_config(&server, backend, Schedule::closed(1), (2, 20)));
        assert_eq!(
            report.status.success, 20,
            "{backend:?}: {:?}",
            report.errors
        );
    }
}

#[test]
fn a_malformed_frame_is_a_protocol_error_and_the_connection_is_replaced() {
    for backend in BACKENDS {
        let server = h2_server(
            H2Knobs {
                malformed_frame: true,
                ..H2Knobs::default()
            },
            false,
            Knobs::default(),
        );
        let report = run(h2_config(&server, backend, Schedule::closed(1), (1, 10)));
        let at = format!("{backend:?}");
        assert_eq!(report.errors.protocol, 10, "{at}: {:?}", report.errors);
        assert_eq!(report.errors.total(), 10, "{at}: {:?}", report.errors);
        // The connection that checked the server first, then one per error
        // (and perhaps one more, opened as the run ended).
        assert!(server.counters().connections_accepted >= 11, "{at}");
    }
}

#[test]
fn a_window_that_never_opens_is_a_flow_control_stall() {
    for backend in BACKENDS {
        let server = h2_server(
            H2Knobs {
                closed_window: true,
                ..H2Knobs::default()
            },
            false,
            Knobs::default(),
        );
        let mut config = h2_config(&server, backend, Schedule::closed(1), (2, 4));
        config.request = RequestTemplate {
            method: "POST".into(),
            headers: Vec::new(),
            body: b"a body the server never lets in".to_vec(),
        };
        config.timeout = Duration::from_millis(200);
        let report = run(config);
        let at = format!("{backend:?}");
        // The first stream goes out with the preface, under the default
        // window every connection starts with, and is answered; every
        // stream opened after the server's SETTINGS closed the window stalls.
        assert_eq!(report.status.success, 1, "{at}: {:?}", report.errors);
        assert_eq!(
            report.errors.flow_control_stall, 3,
            "{at}: {:?}",
            report.errors
        );
        assert_eq!(report.errors.total(), 3, "{at}: {:?}", report.errors);
    }
}

#[test]
fn a_serialising_server_answers_every_stream() {
    let server = h2_server(
        H2Knobs {
            serial: true,
            ..H2Knobs::default()
        },
        false,
        Knobs {
            response_delay: Duration::from_millis(2),
            ..Knobs::default()
        },
    );
    let report = run(h2_config(
        &server,
        Backend::Epoll,
        Schedule::closed(1),
        (4, 40),
    ));
    assert_eq!(report.status.success, 40, "{:?}", report.errors);
}

#[test]
fn h2c_to_an_http1_server_is_refused_before_the_run() {
    // The contract server in HTTP/1.1 answers the preface with a 400, as
    // HTTP/1.1 servers do; the knob server closes the connection on it.
    let contract = ContractServer::start(ContractConfig::default()).unwrap();
    let endpoint =
        corobench_load::Endpoint::from_url(&format!("http://{}/plaintext", contract.addr()))
            .unwrap();
    let config = LoadConfig {
        http2: Some(Http2Options::default()),
        ..LoadConfig::closed(endpoint, 1, Duration::from_secs(1))
    };
    let error = LoadRun::prepare(config).unwrap_err();
    assert!(matches!(error, LoadError::Protocol { .. }), "{error:?}");
    assert!(
        error.to_string().contains("speaks HTTP/1.1, not h2c"),
        "{error}"
    );
    let knobs = TestServer::start(Knobs::default());
    let config = h2_config(&knobs, Backend::Epoll, Schedule::closed(1), (1, 1));
    let error = LoadRun::prepare(config).unwrap_err();
    assert!(matches!(error, LoadError::Protocol { .. }), "{error:?}");
    assert!(error.to_string().contains("does not speak h2c"), "{error}");
}

#[test]
fn h2_to_a_server_that_agrees_on_http1_is_refused_before_the_run() {
    for alpn in [vec!["http/1.1".to_owned()], Vec::new()] {
        let server = TestServer::start(Knobs {
            tls: Some(TlsKnobs {
                alpn: alpn.clone(),
                ..TlsKnobs::default()
            }),
            ..Knobs::default()
        });
        let config = h2_config(&server, Backend::Epoll, Schedule::closed(1), (1, 1));
        let error = LoadRun::prepare(config).unwrap_err();
        assert!(
            matches!(error, LoadError::Protocol { .. }),
            "{alpn:?}: {error:?}"
        );
        assert!(
            error.to_string().contains("does not serve HTTP/2"),
            "{alpn:?}: {error}"
        );
    }
}

#[test]
fn pipelining_over_http2_is_refused_naming_streams() {
    let server = h2_server(H2Knobs::default(), false, Knobs::default());
    let mut config = h2_config(&server, Backend::Epoll, Schedule::closed(1), (1, 1));
    config.schedule = config.schedule.with_pipeline(4);
    config.stop = StopAfter::Requests(1);
    let error = LoadRun::prepare(config).unwrap_err();
    assert!(
        matches!(&error, LoadError::Config { settings, .. } if settings.contains(&Setting::Streams)),
        "{error}"
    );
    assert!(error.to_string().contains("several streams"), "{error}");
}

#[test]
fn the_contract_server_serves_h2c_streams_at_once() {
    let server = ContractServer::start(ContractConfig {
        http2: true,
        ..ContractConfig::default()
    })
    .unwrap();
    for path in ["/plaintext", "/json", "/io?ms=20"] {
        let endpoint =
            corobench_load::Endpoint::from_url(&format!("http://{}{path}", server.addr())).unwrap();
        let config = LoadConfig {
            stop: StopAfter::Requests(40),
            http2: Some(Http2Options {
                streams: 10,
                ..Http2Options::default()
            }),
            ..LoadConfig::closed(endpoint, 1, Duration::from_secs(1))
        };
        let report = run(config);
        assert_eq!(report.status.success, 40, "{path}: {:?}", report.errors);
        assert_eq!(
            http2_of(&report).server_max_concurrent_streams,
            Some(256),
            "{path}"
        );
    }
}

#[test]
fn background_streams_run_beside_the_measured_ones_and_are_counted_apart() {
    let server = ContractServer::start(ContractConfig {
        http2: true,
        ..ContractConfig::default()
    })
    .unwrap();
    for backend in BACKENDS {
        let url = format!("http://{}/plaintext", server.addr());
        let endpoint = corobench_load::Endpoint::from_url(&url).unwrap();
        let config = LoadConfig {
            backend,
            http2: Some(Http2Options {
                streams: 4,
                ..Http2Options::default()
            }),
            background: Some(corobench_load::BackgroundRecord {
                path: "/io?ms=50".to_owned(),
                streams: 2,
            }),
            ..LoadConfig::closed(endpoint, 1, Duration::from_millis(600))
        };
        let report = run(config);
        let at = format!("{backend:?}");
        assert!(report.status.success > 0, "{at}");
        assert_eq!(report.errors.total(), 0, "{at}: {:?}", report.errors);
        let http2 = http2_of(&report);
        assert_eq!(
            http2.streams_in_flight_max, 4,
            "{at}: the background streams are not the measured ones"
        );
        let background = http2.background.as_ref().expect("a background report");
        assert_eq!(
            (background.path.as_str(), background.streams_per_connection),
            ("/io?ms=50", 2),
            "{at}"
        );
        assert!(background.responses >= 1, "{at}: {background:?}");
        assert_eq!(background.errors, 0, "{at}: {background:?}");
        // The server holds each /io?ms=50 answer at least 50 ms.
        assert!(background.latency_mean_ms >= 50.0, "{at}: {background:?}");
        assert!(
            report.status.success > background.responses,
            "{at}: the fast requests are the measured ones"
        );
    }
}

#[test]
fn a_background_request_over_http1_is_refused_naming_the_setting() {
    let server = h2_server(H2Knobs::default(), false, Knobs::default());
    let mut config = h2_config(&server, Backend::Epoll, Schedule::closed(1), (1, 10));
    config.http2 = None;
    config.background = Some(corobench_load::BackgroundRecord {
        path: "/io?ms=200".to_owned(),
        streams: 1,
    });
    let error = config.validate().unwrap_err();
    assert!(
        matches!(&error, LoadError::Config { settings, .. } if settings.contains(&Setting::Background)),
        "{error}"
    );
    assert!(error.to_string().contains("only HTTP/2"), "{error}");
    config.http2 = Some(Http2Options::default());
    config.background = Some(corobench_load::BackgroundRecord {
        path: "io?ms=200".to_owned(),
        streams: 1,
    });
    let error = config.validate().unwrap_err().to_string();
    assert!(error.contains("must start with '/'"), "{error}");
}

#[test]
fn goaway_with_a_background_stream_open_still_reconnects() {
    for backend in BACKENDS {
        let server = h2_server(
            H2Knobs {
                goaway_every: Some(10),
                ..H2Knobs::default()
            },
            false,
            Knobs {
                response_delay: Duration::from_millis(1),
                ..Knobs::default()
            },
        );
        let mut config = h2_config(&server, backend, Schedule::closed(1), (4, 200));
        config.background = Some(corobench_load::BackgroundRecord {
            path: "/slow".to_owned(),
            streams: 1,
        });
        let report = run(config);
        let at = format!("{backend:?}");
        assert!(http2_of(&report).goaways > 0, "{at}");
        assert!(
            server.counters().connections_accepted > 2,
            "{at}: it reconnected"
        );
        assert_eq!(
            report.requests + report.errors.refused_stream,
            200,
            "{at}: every measured request ended: {:?}",
            report.errors
        );
    }
}

#[test]
fn a_background_request_never_answered_is_a_warning_not_a_silent_success() {
    let server = ContractServer::start(ContractConfig {
        http2: true,
        ..ContractConfig::default()
    })
    .unwrap();
    let url = format!("http://{}/plaintext", server.addr());
    let endpoint = corobench_load::Endpoint::from_url(&url).unwrap();
    let config = LoadConfig {
        backend: Backend::Epoll,
        http2: Some(Http2Options {
            streams: 2,
            ..Http2Options::default()
        }),
        // The contract answers an unknown path with 404: never answered.
        background: Some(corobench_load::BackgroundRecord {
            path: "/no-such-path".to_owned(),
            streams: 1,
        }),
        ..LoadConfig::closed(endpoint, 1, Duration::from_millis(300))
    };
    let report = run(config);
    assert!(report.status.success > 0, "the measured load ran");
    let background = http2_of(&report).background.clone().unwrap();
    assert_eq!(background.responses, 0, "{background:?}");
    assert!(background.errors > 0, "{background:?}");
    let warning = report
        .warnings
        .iter()
        .find(|w| matches!(w, corobench_model::LoadWarning::BackgroundUnanswered { .. }))
        .expect("a warning that nothing ran beside");
    assert!(
        warning.to_string().contains("nothing ran beside"),
        "{warning}"
    );
}
