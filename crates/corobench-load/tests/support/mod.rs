//! What the engine tests share: the backends to run on and a run against a
//! test server's `/plaintext`.

// Each test file uses its own part of this.
#![allow(dead_code)]

use std::time::Duration;

use corobench_load::{Backend, Endpoint, LoadConfig, LoadReport, Schedule, StopAfter};
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

/// `schedule` of one thread against `server`'s `/plaintext`, stopping after `requests`.
pub fn schedule_config(
    server: &TestServer,
    backend: Backend,
    schedule: Schedule,
    requests: u64,
) -> LoadConfig {
    LoadConfig {
        schedule,
        ..config(
            server,
            backend,
            schedule.connections,
            StopAfter::Requests(requests),
        )
    }
}

pub fn run(config: LoadConfig) -> LoadReport {
    corobench_load::run(config).expect("the load runs")
}
