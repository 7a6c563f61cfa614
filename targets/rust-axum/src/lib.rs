//! The axum target as a library, so tests can serve it in-process.

mod app;
mod db;
mod tls;
mod upload;

use std::sync::Arc;

use rust_common::env::ServerEnv;
pub use tls::serve_tls;

/// The whole contract as one axum router; the database pool connects lazily.
pub fn router(env: &ServerEnv, db_pool: usize) -> anyhow::Result<axum::Router> {
    let db = db::Db::new(env.database_url.as_deref(), db_pool)?;
    Ok(app::router(Arc::new(app::App::new(env, db)?)))
}
