//! `/db` without leaving the thread: tokio-postgres runs over a compio
//! socket (through compio's `io-compat` stream and tokio-util's trait
//! bridge), and each runtime thread keeps its own small pool.

use std::cell::RefCell;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr as _;
use std::time::Duration;

use anyhow::{Context as _, bail};
use async_lock::Semaphore;
use compio::io::compat::AsyncStream;
use compio::net::TcpStream;
use compio::time::timeout;
use rust_common::db::{WORLD_QUERY, not_configured, random_world_id, unavailable};
use rust_common::{ContractError, Reply};
use tokio_postgres::config::Host;
use tokio_postgres::{Client, NoTls, Statement};
use tokio_util::compat::FuturesAsyncReadCompatExt as _;

use crate::tasks::spawn_counted;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const WAIT_TIMEOUT: Duration = Duration::from_secs(5);
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the database is, parsed once from `DATABASE_URL`.
#[derive(Debug, Clone)]
pub(crate) struct DbTarget {
    config: tokio_postgres::Config,
    address: SocketAddr,
}

impl DbTarget {
    pub(crate) fn parse(url: &str) -> anyhow::Result<Self> {
        let config = tokio_postgres::Config::from_str(url)
            .context("DATABASE_URL is not a postgres:// URL tokio-postgres understands")?;
        let Some(Host::Tcp(host)) = config.get_hosts().first() else {
            bail!("DATABASE_URL must name one TCP host, e.g. postgres://USER@127.0.0.1:PORT/DB");
        };
        // An address, not a name: resolving would need a blocking thread.
        let ip = IpAddr::from_str(host)
            .with_context(|| format!("DATABASE_URL host {host:?} must be an IP address"))?;
        let port = config.get_ports().first().copied().unwrap_or(5432);
        Ok(Self {
            config,
            address: SocketAddr::new(ip, port),
        })
    }
}

/// A connection ready for the query, its statement prepared once.
struct Pooled {
    client: Client,
    statement: Statement,
}

/// This thread's connections: at most `max_size`, made on first need.
pub(crate) struct LocalPool {
    target: Option<DbTarget>,
    idle: RefCell<Vec<Pooled>>,
    permits: Semaphore,
}

impl std::fmt::Debug for LocalPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalPool")
            .field("idle", &self.idle.borrow().len())
            .finish_non_exhaustive()
    }
}

impl LocalPool {
    pub(crate) fn new(target: Option<DbTarget>, max_size: usize) -> Self {
        Self {
            target,
            idle: RefCell::new(Vec::new()),
            permits: Semaphore::new(max_size),
        }
    }

    /// One random row of `world`, read with one query.
    pub(crate) async fn random_world(&self) -> Result<Reply, ContractError> {
        let target = self.target.as_ref().ok_or_else(not_configured)?;
        let _permit = timeout(WAIT_TIMEOUT, self.permits.acquire())
            .await
            .map_err(|_| unavailable("no pooled connection became free within 5 s"))?;
        let idle = self.idle.borrow_mut().pop();
        let pooled = match idle {
            Some(pooled) if !pooled.client.is_closed() => pooled,
            _ => connect(target).await?,
        };
        let id = random_world_id();
        let row = timeout(
            QUERY_TIMEOUT,
            pooled.client.query_one(&pooled.statement, &[&id]),
        )
        .await
        .map_err(|_| unavailable("query timed out after 5 s"))?
        .map_err(unavailable)?;
        let reply = Reply::world(
            row.try_get(0).map_err(unavailable)?,
            row.try_get(1).map_err(unavailable)?,
        );
        self.idle.borrow_mut().push(pooled);
        Ok(reply)
    }
}

async fn connect(target: &DbTarget) -> Result<Pooled, ContractError> {
    timeout(CONNECT_TIMEOUT, connect_uncapped(target))
        .await
        .map_err(|_| {
            unavailable(format!(
                "connecting to {} timed out after 2 s",
                target.address
            ))
        })?
}

async fn connect_uncapped(target: &DbTarget) -> Result<Pooled, ContractError> {
    let stream = TcpStream::connect(target.address)
        .await
        .map_err(|e| unavailable(format!("{}: {e}", target.address)))?;
    let _ = stream.set_nodelay(true);
    // compio socket -> futures-io traits -> tokio-io traits (what tokio-postgres reads).
    let stream = Box::pin(AsyncStream::new(stream)).compat();
    let (client, connection) = target
        .config
        .connect_raw(stream, NoTls)
        .await
        .map_err(unavailable)?;
    spawn_counted(async move {
        if let Err(error) = connection.await {
            eprintln!("rust-compio: database connection ended: {error}");
        }
    });
    let statement = client.prepare(WORLD_QUERY).await.map_err(unavailable)?;
    Ok(Pooled { client, statement })
}
