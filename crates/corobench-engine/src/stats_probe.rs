//! Reads a target's `/stats`: the contract's task count for the leak check,
//! and its database pool's own counters where it reports them. It asks in
//! the protocol the trial speaks, so a server that serves HTTP/2 alone
//! (h2c by prior knowledge, or h2 agreed by ALPN) answers too.

use std::net::SocketAddr;
use std::time::Duration;

use corobench_model::{PoolCounters, Protocol};
use corobench_verify::client::{Client, Request, Response};
use corobench_verify::h2client::H2Client;
use corobench_verify::transport::Connector;

use crate::connection::Trust;

const TIMEOUT: Duration = Duration::from_secs(2);

/// What one `/stats` answer told.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsReading {
    /// `tasks`, `None` when the target cannot say.
    pub tasks: Option<u64>,
    /// `pool`, `None` when the target has no pool (or reports it malformed).
    pub pool: Option<PoolCounters>,
}

/// Where a target's `/stats` is asked, and in which protocol.
#[derive(Clone, Debug)]
pub struct StatsRoute {
    connector: Connector,
    addr: SocketAddr,
    http2: bool,
}

impl StatsRoute {
    /// The route to a server at `addr` speaking `protocol`; `None` over
    /// TLS with nothing to trust.
    #[must_use]
    pub fn new(protocol: Protocol, trust: &Trust, addr: SocketAddr) -> Option<Self> {
        let connector = crate::connection::connector(protocol, trust, addr)?;
        Some(Self {
            connector,
            addr,
            http2: protocol.is_h2(),
        })
    }

    /// The target's `/stats`, or `None` when it does not answer with one.
    #[must_use]
    pub fn read(&self) -> Option<StatsReading> {
        let response = self.ask().ok()?;
        if response.status != 200 {
            return None;
        }
        parse(&response.body)
    }

    /// The `tasks` a target reports, or `None` when it cannot say (or does
    /// not answer).
    #[must_use]
    pub fn tasks(&self) -> Option<u64> {
        self.read()?.tasks
    }

    fn ask(&self) -> Result<Response, corobench_verify::client::ClientError> {
        if self.http2 {
            let mut client = H2Client::connect(&self.connector, self.addr, TIMEOUT)?;
            return client.exchange(&Request::get("/stats"));
        }
        let mut client = Client::connect_with(&self.connector, self.addr, TIMEOUT)?;
        client.exchange(&Request::get("/stats").closing())
    }
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
    use corobench_target::AttachedTls;
    use corobench_testkit::{CertKind, ContractConfig, ContractServer, TestCerts, TlsKnobs};

    /// The contract's test server, speaking HTTP/2 beside HTTP/1.1 (over
    /// TLS with `certs`, offering h2 and http/1.1 by ALPN).
    fn contract(certs: Option<&TestCerts>) -> ContractServer {
        let tls = certs.map(|certs| {
            let knobs = TlsKnobs {
                alpn: vec!["h2".to_owned(), "http/1.1".to_owned()],
                ..TlsKnobs::default()
            };
            certs.server_config(&knobs).unwrap()
        });
        ContractServer::start(ContractConfig {
            http2: true,
            tls,
            ..ContractConfig::default()
        })
        .unwrap()
    }

    #[test]
    fn stats_are_read_in_the_protocol_the_trial_speaks() {
        let cleartext = contract(None);
        for protocol in [Protocol::HTTP1, Protocol::H2C] {
            let route = StatsRoute::new(protocol, &Trust::Cleartext, cleartext.addr()).unwrap();
            assert_eq!(route.http2, protocol.is_h2());
            let reading = route.read().expect("a /stats answer");
            assert!(reading.tasks.is_some(), "{protocol:?}: {reading:?}");
        }
        let certs = TestCerts::new(CertKind::Valid);
        let dir = tempfile::tempdir().unwrap();
        let [ca, _, _] = certs.write_to(dir.path()).unwrap();
        let trust = Trust::Attached(AttachedTls {
            ca: Some(ca),
            insecure: false,
        });
        let over_tls = contract(Some(&certs));
        for protocol in [Protocol::TLS, Protocol::H2] {
            let route = StatsRoute::new(protocol, &trust, over_tls.addr()).unwrap();
            let reading = route.read().expect("a /stats answer over TLS");
            assert!(reading.tasks.is_some(), "{protocol:?}: {reading:?}");
        }
        assert!(
            StatsRoute::new(Protocol::H2, &Trust::Cleartext, over_tls.addr()).is_none(),
            "TLS with nothing to trust has no route"
        );
    }

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
