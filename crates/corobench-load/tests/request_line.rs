//! What goes on the wire, as the test server received it: the request
//! target of a URL with a fragment or non-ASCII bytes, and how a status
//! code that is no HTTP status is counted. Counts only, no timings.

mod support;

use corobench_load::{Endpoint, LoadConfig, StopAfter};
use corobench_testkit::{Knobs, TestServer};
use support::{BACKENDS, config, run};

#[test]
fn the_server_receives_the_target_without_fragment_and_percent_encoded() {
    let cases = [
        ("/p?a=1#frag", "/p?a=1"),
        ("/café/ü?q=日本#x", "/caf%C3%A9/%C3%BC?q=%E6%97%A5%E6%9C%AC"),
        ("/a%20b?x=%E2%82%AC", "/a%20b?x=%E2%82%AC"),
    ];
    for backend in BACKENDS {
        for (path, received) in cases {
            let server = TestServer::start(Knobs::default());
            let report = run(LoadConfig {
                endpoint: Endpoint::from_url(&server.url(path)).unwrap(),
                ..config(&server, backend, 2, StopAfter::Requests(5))
            });
            assert_eq!(report.status.success, 5, "{backend:?} {path}");
            assert_eq!(
                server.request_targets(),
                [received],
                "{backend:?}: every request went out as {received}"
            );
        }
    }
}

#[test]
fn a_status_outside_100_to_599_is_malformed() {
    for backend in BACKENDS {
        for status in [600, 999] {
            let server = TestServer::start(Knobs {
                status,
                ..Knobs::default()
            });
            let report = run(config(&server, backend, 2, StopAfter::Requests(20)));
            let label = format!("{backend:?} status {status}");
            assert_eq!(report.errors.malformed, 20, "{label}: {:?}", report.errors);
            assert_eq!(report.errors.status_5xx, 0, "{label}");
            assert_eq!(report.requests, 0, "{label}: no valid response");
            assert_eq!(report.status.total(), 0, "{label}");
            assert_eq!(server.counters().requests_received, 20, "{label}");
        }
    }
}
