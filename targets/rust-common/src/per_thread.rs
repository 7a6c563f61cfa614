//! What the thread-per-core targets share around their runtimes: the
//! validated configuration, the per-thread context that composes a
//! runtime's primitives into the endpoints, one `SO_REUSEPORT` listener per
//! runtime thread with its accept loop, and the main thread's wait for
//! SIGTERM.
// Implemented by single-threaded runtimes whose futures are not `Send`.
#![allow(async_fn_in_trait)]

use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

use crate::env::{EnvError, ServerEnv, int_param};
use crate::pg_local::{DbTarget, LocalPool, PgRuntime};
use crate::protocol::HttpProtocol;
use crate::serve::{Endpoints, Transport, UploadFile, serve_connection};
use crate::{ContractError, Reply, payload};

/// How long a runtime thread waits after a failed accept.
const ACCEPT_RETRY_MS: u32 = 10;
/// A client that connects and never finishes its TLS handshake gives up
/// its task after this long.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The primitives a thread-per-core runtime brings: its listener and
/// sockets, its timer and its file I/O (its spawn and the database's
/// socket and timeout come through [`PgRuntime`]).
pub trait Runtime: PgRuntime + 'static {
    /// The model id `/stats` reports, equal to `model` in `target.toml`.
    const MODEL: &'static str;
    /// A listener registered with this thread's runtime.
    type Listener;
    /// One accepted connection's socket.
    type Socket: Transport + 'static;
    type File: UploadFile;
    /// Takes over a bound, listening socket on the calling runtime thread.
    fn listener(listener: TcpListener) -> io::Result<Self::Listener>;
    /// Waits for the next connection, with Nagle's algorithm off (small
    /// answers go out at once).
    async fn accept(listener: &Self::Listener) -> io::Result<Self::Socket>;
    /// Waits in the runtime's own timer.
    async fn sleep(wait_ms: u32);
    /// Reads exactly the first `len_bytes` of the file at `path`.
    async fn read_prefix(path: &Path, len_bytes: usize) -> io::Result<Vec<u8>>;
    async fn create_file(path: &Path) -> io::Result<Self::File>;
    /// Closes and removes a file, ignoring failures (it is temporary).
    async fn remove_file(file: Self::File, path: &Path);
    /// The runtime's TLS crate, made from the shared rustls configuration.
    type TlsAcceptor: Clone + 'static;
    /// A TLS session over an accepted socket.
    type TlsSocket: Transport + 'static;
    fn tls_acceptor(config: Arc<rustls::ServerConfig>) -> Self::TlsAcceptor;
    /// The server side of the handshake on a freshly accepted socket.
    async fn tls_handshake(
        acceptor: &Self::TlsAcceptor,
        socket: Self::Socket,
    ) -> io::Result<Self::TlsSocket>;
}

/// What one runtime thread shares among its connections (never across threads).
#[derive(Debug)]
pub struct ThreadContext<R> {
    pub config: Config,
    pub db: LocalPool<R>,
}

impl<R: Runtime> ThreadContext<R> {
    pub fn new(config: Config) -> Self {
        let db = LocalPool::new(config.db.clone(), config.db_pool_per_thread);
        Self { config, db }
    }
}

impl<R: Runtime> Endpoints for ThreadContext<R> {
    type File = R::File;

    fn server_name(&self) -> &str {
        &self.config.server_name
    }

    fn model(&self) -> &'static str {
        R::MODEL
    }

    fn upload_dir(&self) -> &Path {
        &self.config.upload_dir
    }

    async fn sleep(&self, wait_ms: u32) {
        R::sleep(wait_ms).await;
    }

    async fn read_payload(&self, len_bytes: usize) -> Result<Vec<u8>, ContractError> {
        let path = payload::payload_path(&self.config.data_dir);
        R::read_prefix(&path, len_bytes)
            .await
            .map_err(|e| payload::unreadable(&path, &e))
    }

    async fn world(&self) -> Result<Reply, ContractError> {
        self.db.random_world().await
    }

    async fn create_upload(&self, path: &Path) -> io::Result<R::File> {
        R::create_file(path).await
    }

    async fn remove_upload(&self, file: R::File, path: &Path) {
        R::remove_file(file, path).await;
    }
}

/// Starts one thread per listener, named `{prefix}-{index}`, each running
/// `run_thread` (which builds its runtime and calls [`serve_listener`]).
pub fn start_threads(
    target: &str,
    prefix: &str,
    config: &Config,
    listeners: Vec<TcpListener>,
    run_thread: fn(Config, TcpListener),
) -> io::Result<Vec<JoinHandle<()>>> {
    eprintln!(
        "{target}: {} runtime thread(s) on {}",
        listeners.len(),
        SocketAddr::from((config.listen, config.port))
    );
    listeners
        .into_iter()
        .enumerate()
        .map(|(index, listener)| {
            let config = config.clone();
            std::thread::Builder::new()
                .name(format!("{prefix}-{index}"))
                .spawn(move || run_thread(config, listener))
        })
        .collect()
}

/// A runtime thread's work: accepts connections on `listener` until the
/// process ends and serves each on this thread, as a task of its own; over
/// TLS the task begins with the handshake.
pub async fn serve_listener<R: Runtime>(target: &str, config: Config, listener: TcpListener) {
    let listener =
        R::listener(listener).unwrap_or_else(|e| fatal(target, &format!("listener: {e}")));
    let tls = config.tls.clone();
    let context = Rc::new(ThreadContext::<R>::new(config));
    match tls {
        None => {
            accept_each::<R>(target, &listener, |socket| {
                R::spawn(serve_socket(socket, Rc::clone(&context)));
            })
            .await;
        }
        Some(tls) => {
            let acceptor = R::tls_acceptor(tls);
            accept_each::<R>(target, &listener, |socket| {
                R::spawn(serve_tls_socket(
                    acceptor.clone(),
                    socket,
                    Rc::clone(&context),
                ));
            })
            .await;
        }
    }
}

async fn accept_each<R: Runtime>(
    target: &str,
    listener: &R::Listener,
    mut serve: impl FnMut(R::Socket),
) {
    loop {
        match R::accept(listener).await {
            Ok(socket) => serve(socket),
            Err(error) => {
                // Out of descriptors or the like: back off instead of spinning.
                eprintln!("{target}: accept failed: {error}");
                R::sleep(ACCEPT_RETRY_MS).await;
            }
        }
    }
}

async fn serve_socket<T: Transport, R: Runtime>(mut socket: T, context: Rc<ThreadContext<R>>) {
    // A reset or a half-written answer only ends this connection.
    let _ = serve_connection(&mut socket, context.as_ref()).await;
    socket.close().await;
}

async fn serve_tls_socket<R: Runtime>(
    acceptor: R::TlsAcceptor,
    socket: R::Socket,
    context: Rc<ThreadContext<R>>,
) {
    // A failed or abandoned handshake only ends this connection.
    if let Some(Ok(session)) =
        R::timeout(HANDSHAKE_TIMEOUT, R::tls_handshake(&acceptor, socket)).await
    {
        serve_socket(session, context).await;
    }
}

/// A runtime thread cannot serve without its ring: stop the whole process
/// (exit 3), so corobench sees a failed start rather than a half-served port.
pub fn fatal(target: &str, message: &str) -> ! {
    eprintln!("{target}: {message}");
    std::process::exit(3)
}

/// Everything a runtime thread needs, validated before any thread starts.
#[derive(Debug, Clone)]
pub struct Config {
    pub server_name: String,
    pub data_dir: PathBuf,
    pub upload_dir: PathBuf,
    /// `LISTEN_ADDR`.
    pub listen: IpAddr,
    pub port: u16,
    pub threads: u32,
    /// Connections each thread's own pool may open.
    pub db_pool_per_thread: usize,
    pub db: Option<DbTarget>,
    /// Set when `TLS_CERT` and `TLS_KEY` make the port an HTTPS port.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

impl Config {
    /// The contract's variables plus `THREADS` and `DB_POOL`; `target`
    /// serves HTTP/1.1 only (in cleartext or over TLS), and says why not
    /// HTTP/2 when asked for it.
    pub fn from_env(target: &str, why_not_http2: &str) -> Result<Self, EnvError> {
        let env = ServerEnv::from_env()?;
        env.protocols
            .require(target, &[HttpProtocol::Http1], why_not_http2)?;
        let threads = int_param("THREADS", 1, 1..=256)?;
        let db_pool = int_param("DB_POOL", 16, 1..=1024)?;
        Self::new(env, threads, db_pool)
    }

    pub fn new(env: ServerEnv, threads: u32, db_pool: u32) -> Result<Self, EnvError> {
        let db = env
            .database_url
            .as_deref()
            .map(DbTarget::parse)
            .transpose()?;
        let tls = env
            .protocols
            .tls
            .as_ref()
            .map(|files| crate::tls::server_config(files, env.protocols.http))
            .transpose()?;
        Ok(Self {
            server_name: env.target_name,
            data_dir: env.data_dir,
            upload_dir: env.upload_dir,
            listen: env.listen,
            port: env.port,
            threads,
            // The pool is split over the threads (share nothing), rounding up.
            db_pool_per_thread: db_pool.div_ceil(threads) as usize,
            db,
            tls,
        })
    }
}

/// One listener per runtime thread on `listen:port`, all bound with
/// `SO_REUSEPORT`: the kernel spreads new connections over them by hash.
pub fn reuse_port_listeners(
    listen: IpAddr,
    port: u16,
    count: u32,
) -> Result<Vec<TcpListener>, EnvError> {
    let address = SocketAddr::from((listen, port));
    (0..count)
        .map(|_| {
            reuse_port_listener(address)
                .map_err(|e| EnvError(format!("cannot listen on {address} (PORT): {e}")))
        })
        .collect()
}

fn reuse_port_listener(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = Socket::new(
        Domain::for_address(address),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.bind(&address.into())?;
    socket.listen(1024)?;
    Ok(socket.into())
}

/// Blocks the calling (main) thread until SIGTERM or SIGINT, then removes
/// this process's unfinished upload files; the caller then exits, ending
/// the runtime threads with it.
pub fn wait_for_termination(target: &str, upload_dir: &std::path::Path) -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ])?;
    if let Some(signal) = signals.forever().next() {
        let removed = crate::upload::remove_own_temp_files(upload_dir);
        eprintln!(
            "{target}: signal {signal}, exiting ({removed} unfinished upload file(s) removed)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn listeners_share_one_port() {
        let first = reuse_port_listeners(IpAddr::V4(Ipv4Addr::LOCALHOST), 0, 1).expect("bind")[0]
            .local_addr()
            .expect("address");
        let more = reuse_port_listeners(IpAddr::V4(Ipv4Addr::LOCALHOST), first.port(), 2)
            .expect("same port again");
        assert_eq!(more.len(), 2);
        assert!(
            more.iter()
                .all(|l| l.local_addr().expect("address") == first)
        );
    }

    #[test]
    fn pool_is_split_over_threads_rounding_up() {
        let env = ServerEnv::from_lookup(|name| match name {
            "PORT" => Some("1".into()),
            "TARGET_NAME" | "DATA_DIR" | "UPLOAD_DIR" => Some("x".into()),
            _ => None,
        })
        .expect("env");
        assert_eq!(
            Config::new(env.clone(), 3, 16)
                .expect("config")
                .db_pool_per_thread,
            6
        );
        assert_eq!(
            Config::new(env, 1, 16).expect("config").db_pool_per_thread,
            16
        );
    }
}
