//! An open loop's responses wait for its next send: on io_uring the kernel
//! stamps them, so the thread wakes once per send instead of once per send
//! and once per response, and the latency it reports is still the kernel's.

mod support;

use corobench_load::{Backend, Schedule};
use corobench_testkit::{Knobs, TestServer};
use support::{run, schedule_config};

/// Whether this kernel's io_uring receives stamped bytes (Linux 6.0).
fn uring_stamps_here() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release.trim().split(|c: char| !c.is_ascii_digit());
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor) >= (6, 0)
}

#[test]
fn an_open_loop_on_io_uring_reads_responses_at_its_next_send() {
    if !uring_stamps_here() {
        eprintln!("skipped: io_uring receive stamps need Linux 6.0");
        return;
    }
    let server = TestServer::start(Knobs::default());
    // 200 req/s: a send every 5 ms, and the server answers at once.
    let config = schedule_config(&server, Backend::IoUring, Schedule::open(200.0, 4), 300);
    let report = run(config);
    assert_eq!(report.requests, 300);
    assert_eq!(report.errors.total(), 0, "{:?}", report.errors);
    let stamps = report
        .kernel_stamps
        .expect("an open loop on io_uring stamps without being asked");
    assert!(stamps.stamped > 0, "{stamps:?}");
    // Each answer waited to be read until the thread woke for the next
    // send, about 5 ms later; woken by the answer, it would have read it
    // within microseconds.
    assert!(
        stamps.mean_read_delay_us >= 1_000.0,
        "responses were read {} µs after they arrived on average: the thread \
         still wakes for each one",
        stamps.mean_read_delay_us
    );
    // The latency is the kernel's receipt, not the late read.
    let p50_us = report.latency.summary.percentile_us(50.0).unwrap();
    assert!(
        (p50_us as f64) < stamps.mean_read_delay_us,
        "p50 {p50_us} µs includes the wait to be read ({} µs)",
        stamps.mean_read_delay_us
    );
}

#[test]
fn other_loops_stamp_only_when_asked() {
    let server = TestServer::start(Knobs::default());
    let closed = run(schedule_config(
        &server,
        Backend::IoUring,
        Schedule::closed(2),
        50,
    ));
    assert_eq!(
        closed.kernel_stamps, None,
        "a closed loop wakes for each answer"
    );
    let epoll = run(schedule_config(
        &server,
        Backend::Epoll,
        Schedule::open(500.0, 2),
        50,
    ));
    assert_eq!(
        epoll.kernel_stamps, None,
        "epoll cannot sleep through readiness"
    );
    let per_request = Schedule {
        keepalive: false,
        ..Schedule::open(500.0, 2)
    };
    let fresh = run(schedule_config(&server, Backend::IoUring, per_request, 50));
    assert_eq!(
        fresh.kernel_stamps, None,
        "a connection per request sends as soon as it connects"
    );
    assert_eq!(fresh.requests, 50);
}

#[test]
fn a_tick_needs_an_open_loop_and_at_most_ten_milliseconds() {
    use corobench_load::{LoadError, LoadRun, Setting};
    use std::time::Duration;
    let server = TestServer::start(Knobs::default());
    let refused = |schedule: Schedule, tick: Duration| {
        let config = schedule_config(&server, Backend::IoUring, schedule, 10);
        match LoadRun::prepare(config).and_then(|run| run.send_tick(tick)) {
            Err(LoadError::Config { settings, message }) => {
                assert!(settings.contains(&Setting::Tick), "{settings:?}");
                message
            }
            other => panic!("{tick:?} was not refused: {other:?}"),
        }
    };
    let closed = refused(Schedule::closed(2), Duration::from_millis(1));
    assert!(closed.contains("give a rate"), "{closed}");
    let long = refused(Schedule::open(100.0, 2), Duration::from_millis(11));
    assert!(long.contains("at most 10ms"), "{long}");
    let config = schedule_config(&server, Backend::IoUring, Schedule::open(1000.0, 2), 20);
    let report = LoadRun::prepare(config)
        .and_then(|run| run.send_tick(Duration::ZERO)?.run())
        .expect("a tick of zero runs");
    assert_eq!(report.open_loop.and_then(|o| o.tick_us), Some(0));
    assert_eq!(report.requests, 20);
}
