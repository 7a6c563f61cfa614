//! The live view's slots against a real in-process server: what the threads
//! publish is the window as they record it, and nothing is published unless
//! a view asks.

mod support;

use std::time::Duration;

use corobench_load::{LoadConfig, LoadRun, StopAfter};
use corobench_testkit::{Knobs, TestServer};
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
    }
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
