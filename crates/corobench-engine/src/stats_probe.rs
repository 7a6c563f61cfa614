//! Reads a target's `/stats`: the contract's task count for the leak check,
//! and its database pool's own counters where it reports them.

use std::net::SocketAddr;
use std::time::Duration;

use corobench_model::PoolCounters;
use corobench_verify::client::{Client, Request};
use corobench_verify::transport::Connector;

const TIMEOUT: Duration = Duration::from_secs(2);

/// What one `/stats` answer told.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsReading {
    /// `tasks`, `None` when the target cannot say.
    pub tasks: Option<u64>,
    /// `pool`, `None` when the target has no pool (or reports it malformed).
    pub pool: Option<PoolCounters>,
}

/// The target's `/stats` through `connector` (over TLS for a target that
/// speaks it), or `None` when it does not answer with one.
#[must_use]
pub fn read(connector: &Connector, addr: SocketAddr) -> Option<StatsReading> {
    let mut client = Client::connect_with(connector, addr, TIMEOUT).ok()?;
    let response = client.exchange(&Request::get("/stats").closing()).ok()?;
    if response.status != 200 {
        return None;
    }
    parse(&response.body)
}

/// The `tasks` a target reports, or `None` when it cannot say (or does not answer).
#[must_use]
pub fn tasks(connector: &Connector, addr: SocketAddr) -> Option<u64> {
    read(connector, addr)?.tasks
}

fn parse(body: &[u8]) -> Option<StatsReading> {
    let stats: serde_json::Value = serde_json::from_slice(body).ok()?;
    Some(StatsReading {
        tasks: stats.get("tasks").and_then(serde_json::Value::as_u64),
        pool: stats
            .get("pool")
            .and_then(|pool| serde_json::from_value(pool.clone()).ok()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_is_read_as_the_target_reports_it() {
        let body = br#"{"model":"event-loop","threads":1,"tasks":3,"heap_bytes":null,
            "pool":{"max":10,"open":4,"idle":4,"waiting":0,"acquires":900,
            "new_connections":4,"empty_acquires":null,"acquire_wait_us":null}}"#;
        let reading = parse(body).unwrap();
        assert_eq!(reading.tasks, Some(3));
        let pool = reading.pool.unwrap();
        assert_eq!(
            (
                pool.max,
                pool.acquires,
                pool.new_connections,
                pool.empty_acquires
            ),
            (Some(10), Some(900), Some(4), None)
        );
    }

    #[test]
    fn no_pool_or_a_malformed_one_is_no_pool() {
        let without = parse(br#"{"model":"m","threads":1,"tasks":null}"#).unwrap();
        assert_eq!(without, StatsReading::default());
        let malformed = parse(br#"{"tasks":2,"pool":{"acquires":-1}}"#).unwrap();
        assert_eq!((malformed.tasks, malformed.pool), (Some(2), None));
        assert_eq!(parse(b"not json"), None);
    }
}
