//! `/db` for single-threaded runtimes: tokio-postgres over the runtime's own
//! socket (through a tokio-io compatibility wrapper), one small pool per
//! thread, the connection driver spawned as an ordinary task of that thread.
// Implemented by single-threaded runtimes whose futures are not `Send`.
#![allow(async_fn_in_trait)]

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr as _;
use std::time::Duration;

use async_lock::Semaphore;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_postgres::config::Host;
use tokio_postgres::{Client, NoTls, Statement};

use crate::db::{WORLD_QUERY, not_configured, random_world_id, unavailable};
use crate::env::EnvError;
use crate::{ContractError, Reply};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const WAIT_TIMEOUT: Duration = Duration::from_secs(5);
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// What the pool needs from the runtime of the current thread.
pub trait PgRuntime {
    /// A connected socket with tokio's I/O traits.
    type Stream: AsyncRead + AsyncWrite + Unpin + 'static;
    async fn connect(address: SocketAddr) -> io::Result<Self::Stream>;
    /// Runs `task` (a database connection's driver, a client's connection)
    /// on this thread, counted for `/stats` while it runs.
    fn spawn(task: impl Future<Output = ()> + 'static);
    /// `None` when `duration` passed first.
    async fn timeout<F: Future>(duration: Duration, future: F) -> Option<F::Output>;
}

/// Where the database is, parsed once from `DATABASE_URL`.
#[derive(Debug, Clone)]
pub struct DbTarget {
    config: tokio_postgres::Config,
    address: SocketAddr,
}

impl DbTarget {
    pub fn parse(url: &str) -> Result<Self, EnvError> {
        let config = tokio_postgres::Config::from_str(url)
            .map_err(|e| EnvError(format!("DATABASE_URL is not a postgres:// URL: {e}")))?;
        let Some(Host::Tcp(host)) = config.get_hosts().first() else {
            return Err(EnvError(
                "DATABASE_URL must name one TCP host, e.g. postgres://USER@127.0.0.1:PORT/DB"
                    .into(),
            ));
        };
        // An address, not a name: resolving would need a blocking thread.
        let ip = IpAddr::from_str(host)
            .map_err(|_| EnvError(format!("DATABASE_URL host {host:?} must be an IP address")))?;
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
pub struct LocalPool<R> {
    target: Option<DbTarget>,
    idle: RefCell<Vec<Pooled>>,
    permits: Semaphore,
    runtime: std::marker::PhantomData<R>,
}

impl<R> std::fmt::Debug for LocalPool<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalPool")
            .field("target", &self.target)
            .field("idle", &self.idle.borrow().len())
            .finish_non_exhaustive()
    }
}

impl<R: PgRuntime> LocalPool<R> {
    pub fn new(target: Option<DbTarget>, max_size: usize) -> Self {
        Self {
            target,
            idle: RefCell::new(Vec::new()),
            permits: Semaphore::new(max_size),
            runtime: std::marker::PhantomData,
        }
    }

    /// One random row of `world`, read with one query; 503 when the
    /// database is not configured, refuses, or does not answer in time.
    pub async fn random_world(&self) -> Result<Reply, ContractError> {
        let target = self.target.as_ref().ok_or_else(not_configured)?;
        let _permit = R::timeout(WAIT_TIMEOUT, self.permits.acquire())
            .await
            .ok_or_else(|| unavailable("no pooled connection became free within 5 s"))?;
        let idle = self.idle.borrow_mut().pop();
        let pooled = match idle {
            Some(pooled) if !pooled.client.is_closed() => pooled,
            _ => connect::<R>(target).await?,
        };
        let id = random_world_id();
        let row = R::timeout(
            QUERY_TIMEOUT,
            pooled.client.query_one(&pooled.statement, &[&id]),
        )
        .await
        .ok_or_else(|| unavailable("query timed out after 5 s"))?
        .map_err(unavailable)?;
        let reply = Reply::world(
            row.try_get(0).map_err(unavailable)?,
            row.try_get(1).map_err(unavailable)?,
        );
        // Only a connection that answered goes back; a broken one is dropped.
        self.idle.borrow_mut().push(pooled);
        Ok(reply)
    }
}

async fn connect<R: PgRuntime>(target: &DbTarget) -> Result<Pooled, ContractError> {
    R::timeout(CONNECT_TIMEOUT, connect_uncapped::<R>(target))
        .await
        .ok_or_else(|| {
            unavailable(format!(
                "connecting to {} timed out after 2 s",
                target.address
            ))
        })?
}

async fn connect_uncapped<R: PgRuntime>(target: &DbTarget) -> Result<Pooled, ContractError> {
    let stream = R::connect(target.address)
        .await
        .map_err(|e| unavailable(format!("{}: {e}", target.address)))?;
    let (client, connection) = target
        .config
        .connect_raw(stream, NoTls)
        .await
        .map_err(unavailable)?;
    R::spawn(async move {
        if let Err(error) = connection.await {
            eprintln!("database connection ended: {error}");
        }
    });
    let statement = client.prepare(WORLD_QUERY).await.map_err(unavailable)?;
    Ok(Pooled { client, statement })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_contract_url_form() {
        let target = DbTarget::parse("postgres://bench@127.0.0.1:6543/world").expect("valid");
        assert_eq!(target.address, "127.0.0.1:6543".parse().expect("address"));
        assert_eq!(
            DbTarget::parse("postgres://u@127.0.0.1/db")
                .expect("valid")
                .address
                .port(),
            5432
        );
    }

    #[test]
    fn rejects_what_it_cannot_reach_without_blocking() {
        let error = DbTarget::parse("postgres://u@localhost:1/db").unwrap_err();
        assert_eq!(
            error.0,
            r#"DATABASE_URL host "localhost" must be an IP address"#
        );
        assert!(
            DbTarget::parse("mysql:/nonsense")
                .unwrap_err()
                .0
                .starts_with("DATABASE_URL is not")
        );
        let unix = DbTarget::parse("postgres://u@%2Ftmp%2Fpg/db").unwrap_err();
        assert!(
            unix.0.starts_with("DATABASE_URL must name one TCP host"),
            "{unix}"
        );
    }
}
