//! `/db` through a deadpool-postgres pool; connections are made lazily, so
//! a missing database costs a 503 per request, never the start.

use std::str::FromStr as _;
use std::time::Duration;

use anyhow::Context as _;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use rust_common::db::{WORLD_QUERY, not_configured, random_world_id, unavailable};
use rust_common::{ContractError, Reply};
use tokio_postgres::NoTls;

/// A database that does not answer is reported within these bounds
/// instead of holding the request.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const WAIT_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub struct Db {
    pool: Option<Pool>,
}

impl Db {
    /// `url` is `DATABASE_URL`; `None` means no database runs.
    pub fn new(url: Option<&str>, max_size: usize) -> anyhow::Result<Self> {
        let Some(url) = url else {
            return Ok(Self { pool: None });
        };
        let mut config = tokio_postgres::Config::from_str(url)
            .context("DATABASE_URL is not a postgres:// URL tokio-postgres understands")?;
        config.connect_timeout(CONNECT_TIMEOUT);
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(max_size)
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(CONNECT_TIMEOUT))
            .wait_timeout(Some(WAIT_TIMEOUT))
            .build()
            .context("cannot build the database pool")?;
        Ok(Self { pool: Some(pool) })
    }

    /// One random row of `world`, read with one query.
    pub async fn random_world(&self) -> Result<Reply, ContractError> {
        let pool = self.pool.as_ref().ok_or_else(not_configured)?;
        let client = pool.get().await.map_err(unavailable)?;
        let statement = client
            .prepare_cached(WORLD_QUERY)
            .await
            .map_err(unavailable)?;
        let row = client
            .query_one(&statement, &[&random_world_id()])
            .await
            .map_err(unavailable)?;
        let id: i32 = row.try_get(0).map_err(unavailable)?;
        let random_number: i32 = row.try_get(1).map_err(unavailable)?;
        Ok(Reply::world(id, random_number))
    }
}
