//! What the engine tests share: the backends to run on and a run against a
//! test server's `/plaintext`.

// Each test file uses its own part of this.
#![allow(dead_code)]

use std::time::Duration;

use corobench_load::{Backend, Endpoint, LoadConfig, LoadReport, StopAfter};
use corobench_testkit::TestServer;

pub const BACKENDS: [Backend; 2] = [Backend::Epoll, Backend::IoUring];

/// A closed loop of one thread against `server`'s `/plaintext`.
pub fn config(
    server: &TestServer,
    backend: Backend,
    connections: u32,
    stop: StopAfter,
) -> LoadConfig {
    let target = Endpoint::from_url(&server.url("/plaintext")).unwrap();
    LoadConfig {
        backend,
        stop,
        ..LoadConfig::closed(target, connections, Duration::from_secs(1))
    }
}

pub fn run(config: LoadConfig) -> LoadReport {
    corobench_load::run(config).expect("the load runs")
}
