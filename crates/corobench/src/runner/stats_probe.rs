//! Reads a target's `/stats` (the contract's task count) for the leak check.

use std::net::SocketAddr;
use std::time::Duration;

use corobench_verify::client::{Client, Request};

const TIMEOUT: Duration = Duration::from_secs(2);

/// The `tasks` a target reports, or `None` when it cannot say (or does not answer).
#[must_use]
pub fn tasks(addr: SocketAddr) -> Option<u64> {
    let mut client = Client::connect(addr, TIMEOUT).ok()?;
    let response = client.exchange(&Request::get("/stats").closing()).ok()?;
    if response.status != 200 {
        return None;
    }
    let stats: serde_json::Value = serde_json::from_slice(&response.body).ok()?;
    stats.get("tasks")?.as_u64()
}
