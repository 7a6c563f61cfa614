//! Memory per connection, measured as corobench measures it: a fresh test
//! kit server per trial, N idle keep-alive connections each answered once,
//! the server tree's RSS read once it settles, and a line fitted to RSS
//! against N over every trial. The test kit holds a known buffer per
//! connection (`--alloc-per-conn`); its bytes are recovered as the
//! difference of two slopes (with and without the buffer), within their
//! intervals. Nothing here is timed.

mod lab;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use corobench_load::IdleConnections;
use corobench_sampler::{SettleRule, settled_rss};
use corobench_stats::{LineInterval, fit_line_interval};
use lab::Lab;

const REQUEST: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// A test kit server in its own process group inside `lab`, and the
/// address it serves.
fn start_server(lab: &Lab, alloc_per_conn: usize) -> (Child, SocketAddr) {
    let mut command = Command::new(corobench_testkit::binary_path());
    let mut child = lab
        .inside(&mut command)
        .args(["--alloc-per-conn", &alloc_per_conn.to_string()])
        .env("PORT", "0")
        .env("LISTEN_ADDR", "127.0.0.1")
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test kit starts");
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("serving the contract on ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|addr| addr.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    (child, addr)
}

/// RSS of a fresh server holding `connections` idle connections.
fn settled_with(lab: &Lab, alloc_per_conn: usize, connections: u32) -> f64 {
    let (mut server, addr) = start_server(lab, alloc_per_conn);
    let pgid = server.id();
    let idle = IdleConnections::open(addr, REQUEST, connections, Duration::from_secs(30))
        .expect("idle connections open");
    assert_eq!(idle.len(), connections as usize);
    let rss = settled_rss(pgid, SettleRule::default()).expect("the server's RSS");
    drop(idle);
    server.kill().unwrap();
    server.wait().unwrap();
    rss.rss_bytes as f64
}

/// Bytes per connection over trials at 40, 80 and 120 connections.
fn slope(lab: &Lab, alloc_per_conn: usize) -> LineInterval {
    let points: Vec<(f64, f64)> = [40, 80, 120, 40, 80, 120]
        .into_iter()
        .map(|n| (f64::from(n), settled_with(lab, alloc_per_conn, n)))
        .collect();
    fit_line_interval(&points, 0.95).expect("a slope")
}

#[test]
fn a_known_allocation_per_connection_is_recovered_within_the_interval() {
    const ALLOC: usize = 256 * 1024;
    let lab = Lab::new();
    let without = slope(&lab, 0);
    let with = slope(&lab, ALLOC);
    let (lo, hi) = (
        with.slope.lo - without.slope.hi,
        with.slope.hi - without.slope.lo,
    );
    println!(
        "bytes per connection: {:.0} without the buffer, {:.0} with it; \
         the buffer's share in [{lo:.0}, {hi:.0}]",
        without.fit.slope, with.fit.slope
    );
    // The allocator adds its own bookkeeping to each buffer: from the
    // heap a few bytes, through mmap (glibc's choice above 128 KiB) a page
    // of header rounding. The resident cost lies between the two.
    let paged = (ALLOC + 16).div_ceil(4096) * 4096;
    assert!(
        lo <= paged as f64 && ALLOC as f64 <= hi,
        "[{ALLOC}, {paged}] bytes not in [{lo:.0}, {hi:.0}]; without: {without:?}; with: {with:?}"
    );
}

#[test]
fn more_idle_connections_than_file_descriptors_are_refused_with_the_limit() {
    let lab = Lab::new();
    let (mut server, addr) = start_server(&lab, 0);
    let error = IdleConnections::open(addr, REQUEST, u32::MAX, Duration::from_secs(1))
        .expect_err("four billion connections");
    server.kill().unwrap();
    server.wait().unwrap();
    let message = error.to_string();
    assert!(
        message.starts_with(&format!("idle_connections = {}", u32::MAX))
            && message.contains("use at most"),
        "{message}"
    );
}
