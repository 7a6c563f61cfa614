//! One handler for every request: `rust-common` routes it, this file does
//! the tokio-specific work and turns the reply into an axum response.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_TYPE, DATE, SERVER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use rust_common::reply::Stats;
use rust_common::{ContractError, Reply, Route, digest, payload, proc_status, route};

use crate::db::Db;

/// The model id `/stats` reports; equal to `model` in `target.toml`.
const MODEL: &str = "work-stealing-async";

#[derive(Debug)]
pub struct App {
    server: HeaderValue,
    data_dir: PathBuf,
    upload_dir: PathBuf,
    db: Db,
}

impl App {
    pub fn new(env: &rust_common::env::ServerEnv, db: Db) -> anyhow::Result<Self> {
        let server = HeaderValue::from_str(&env.target_name).with_context(|| {
            format!(
                "TARGET_NAME {:?} is not a valid header value",
                env.target_name
            )
        })?;
        Ok(Self {
            server,
            data_dir: env.data_dir.clone(),
            upload_dir: env.upload_dir.clone(),
            db,
        })
    }

    fn respond(&self, reply: Reply) -> Response {
        let body = match reply.body {
            std::borrow::Cow::Borrowed(bytes) => Bytes::from_static(bytes),
            std::borrow::Cow::Owned(bytes) => Bytes::from(bytes),
        };
        let mut response = Response::new(Body::from(body));
        *response.status_mut() =
            StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let headers = response.headers_mut();
        headers.insert(SERVER, self.server.clone());
        // Set here so hyper does not add its own: both Rust targets share one Date cache.
        if let Ok(date) = HeaderValue::from_bytes(&rust_common::date::http_date()) {
            headers.insert(DATE, date);
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
        response
    }
}

/// The router: a single fallback, so unknown paths and wrong methods get
/// the contract's JSON errors from the same table the compio target uses.
pub fn router(app: Arc<App>) -> Router {
    Router::new().fallback(dispatch).with_state(app)
}

async fn dispatch(State(app): State<Arc<App>>, request: Request) -> Response {
    let target = request.uri().path_and_query().map_or("/", |pq| pq.as_str());
    let reply = match route::route(request.method().as_str(), target) {
        Ok(route) => answer(&app, route, request)
            .await
            .unwrap_or_else(|e| Reply::error(&e)),
        Err(error) => Reply::error(&error),
    };
    app.respond(reply)
}

async fn answer(app: &App, route: Route, request: Request) -> Result<Reply, ContractError> {
    Ok(match route {
        Route::Healthz => Reply::healthz(),
        Route::Plaintext => Reply::plaintext(),
        Route::Json => Reply::json(),
        Route::Io { wait_ms } => {
            tokio::time::sleep(Duration::from_millis(wait_ms.into())).await;
            Reply::io(wait_ms)
        }
        Route::Mixed { iters, wait_ms } => {
            // The hashing runs on the worker thread that polls this task:
            // with one worker, every other connection waits for it.
            let digest = digest::hex_lower(&digest::sha256_chain(iters));
            tokio::time::sleep(Duration::from_millis(wait_ms.into())).await;
            Reply::mixed(&digest, iters, wait_ms)
        }
        Route::File { kb } => read_file(app, kb).await?,
        Route::Upload => crate::upload::receive(&app.upload_dir, request).await?,
        Route::Db => app.db.random_world().await?,
        Route::Stats => Reply::stats(&stats()),
    })
}

/// Reads the payload prefix on tokio's blocking pool (what `tokio::fs` does
/// too), in one hop rather than one per 2 MiB chunk.
async fn read_file(app: &App, kb: u32) -> Result<Reply, ContractError> {
    let path = payload::payload_path(&app.data_dir);
    let len_bytes = payload::prefix_len_bytes(kb);
    let bytes =
        tokio::task::spawn_blocking(move || payload::read_prefix_blocking(&path, len_bytes))
            .await
            .map_err(|e| ContractError::Internal {
                message: format!("file read task failed: {e}"),
            })??;
    Ok(Reply::file(bytes))
}

fn stats() -> Stats {
    let metrics = tokio::runtime::Handle::current().metrics();
    Stats {
        model: MODEL,
        threads: proc_status::thread_count(),
        tasks: Some(metrics.num_alive_tasks() as u64),
        heap_bytes: None,
    }
}
