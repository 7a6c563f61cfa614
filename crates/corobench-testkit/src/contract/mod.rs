//! The contract server: every endpoint, header and error of
//! `docs/contract.md`, served with one OS thread per connection (the
//! verifier opens a handful of connections, so simplicity wins), plus
//! [`Fault`]s that each break one rule.

mod conn;
mod fault;
mod routes;
mod world;

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use fault::Fault;
pub use world::{MemoryWorld, PsqlWorld, WorldSource};

/// What the contract server serves and how it misbehaves.
#[derive(Debug, Clone)]
pub struct ContractConfig {
    /// The `Server` header (the target's name).
    pub target_name: String,
    /// The model `/stats` reports.
    pub model: String,
    /// Holds `payload.bin` for `/file` (see [`corobench_target::ensure_payload`]).
    pub data_dir: Option<PathBuf>,
    /// Where `/upload` writes its temporary files; the system's temporary
    /// directory when `None`.
    pub upload_dir: Option<PathBuf>,
    /// The `world` table for `/db`; `None` answers `503` as without a database.
    pub world: Option<Arc<dyn WorldSource>>,
    pub faults: BTreeSet<Fault>,
    /// Serve at most this many requests a second at once; a request beyond
    /// waits 400 ms first: a server whose capacity is known, for
    /// capacity searches.
    pub max_rate: Option<f64>,
    /// How many seconds of `max_rate` a request may find saved up: the
    /// bucket's burst. A larger one absorbs a generator's stall (the
    /// requests it then sends at once) at the cost of a boundary less sharp.
    pub burst_s: f64,
    /// Bytes each connection allocates and touches while it is open: a
    /// server whose memory per connection is known.
    pub alloc_per_conn: usize,
    /// Serve HTTPS with this configuration (`TLS_CERT`, `TLS_KEY`).
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

impl Default for ContractConfig {
    fn default() -> Self {
        Self {
            target_name: "corobench-testkit".to_owned(),
            // The nearest model id: one unit of concurrency (here an OS
            // thread) per connection.
            model: "goroutine-per-connection".to_owned(),
            data_dir: None,
            upload_dir: None,
            world: None,
            faults: BTreeSet::new(),
            max_rate: None,
            burst_s: 0.02,
            alloc_per_conn: 0,
            tls: None,
        }
    }
}

/// A running contract server; dropping it closes every connection, cuts
/// waits short and joins every thread.
#[derive(Debug)]
pub struct ContractServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl ContractServer {
    /// Serves on `127.0.0.1` at a free port.
    ///
    /// # Errors
    /// The listener or its thread could not be had.
    pub fn start(config: ContractConfig) -> io::Result<Self> {
        Self::bind(SocketAddr::from(([127, 0, 0, 1], 0)), config)
    }

    /// Serves on `addr`.
    ///
    /// # Errors
    /// The listener or its thread could not be had.
    pub fn bind(addr: SocketAddr, config: ContractConfig) -> io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(config));
        let acceptor = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("contract-accept".into())
                .spawn(move || accept_loop(&listener, &shared))?
        };
        Ok(Self {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Blocks until the server stops (for the binary, which is stopped by a signal).
    pub fn wait(mut self) {
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

impl Drop for ContractServer {
    fn drop(&mut self) {
        self.shared.stop();
        // Wake the blocking accept so it sees the stop.
        let _ = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        for stream in self.shared.lock_open().values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        let workers = std::mem::take(&mut *self.shared.lock_workers());
        for worker in workers {
            let _ = worker.join();
        }
    }
}

/// How long a request over `max_rate` waits before it is answered.
const OVERLOAD_DELAY: Duration = Duration::from_millis(400);

/// State every connection thread shares.
#[derive(Debug)]
struct Shared {
    config: ContractConfig,
    stopping: Mutex<bool>,
    stopped: Condvar,
    /// Clones of open connections, so a stop can unblock their reads.
    open: Mutex<HashMap<u64, TcpStream>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
    next_connection: AtomicU64,
    next_upload: AtomicU64,
    random_state: AtomicU64,
    /// The row `DbSkipsQuery` repeats.
    remembered_row: Mutex<Option<(i32, i32)>>,
    /// `/select1` queries answered: the pool's checkouts in `/stats`.
    pool_acquires: AtomicU64,
    /// `max_rate`: tokens left and when they were counted.
    bucket: Mutex<Option<(f64, Instant)>>,
}

impl Shared {
    fn new(config: ContractConfig) -> Self {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        Self {
            config,
            stopping: Mutex::new(false),
            stopped: Condvar::new(),
            open: Mutex::new(HashMap::new()),
            workers: Mutex::new(Vec::new()),
            next_connection: AtomicU64::new(0),
            next_upload: AtomicU64::new(0),
            random_state: AtomicU64::new(seed | 1),
            remembered_row: Mutex::new(None),
            pool_acquires: AtomicU64::new(0),
            bucket: Mutex::new(None),
        }
    }

    /// With `max_rate` K, a token bucket: tokens refill at K a second up to
    /// a burst of `burst_s` seconds of K (2% of K by default); a request
    /// that finds a token is answered at once, one that finds none waits
    /// [`OVERLOAD_DELAY`] first. Below K no request waits; above K by more
    /// than the burst, a growing share of requests waits the whole delay.
    /// The boundary lies just above K, and the delay dwarfs any scheduling
    /// noise of a busy test machine.
    fn wait_turn(&self) {
        let Some(rate) = self.config.max_rate else {
            return;
        };
        let burst = (rate * self.config.burst_s).max(1.0);
        let now = Instant::now();
        let has_token = {
            let mut bucket = lock(&self.bucket);
            let (tokens, last) = bucket.unwrap_or((burst, now));
            let tokens = (tokens + now.duration_since(last).as_secs_f64() * rate).min(burst);
            let (left, has) = if tokens >= 1.0 {
                (tokens - 1.0, true)
            } else {
                (tokens, false)
            };
            *bucket = Some((left, now));
            has
        };
        if !has_token {
            self.pause(OVERLOAD_DELAY);
        }
    }

    fn has(&self, fault: Fault) -> bool {
        self.config.faults.contains(&fault)
    }

    fn stop(&self) {
        *lock(&self.stopping) = true;
        self.stopped.notify_all();
    }

    fn is_stopping(&self) -> bool {
        *lock(&self.stopping)
    }

    /// Sleeps for `length`, or less when the server stops.
    fn pause(&self, length: Duration) {
        let guard = lock(&self.stopping);
        let _ = self
            .stopped
            .wait_timeout_while(guard, length, |stopping| !*stopping);
    }

    /// A uniformly random id of the `world` table.
    fn random_world_id(&self) -> i32 {
        let next = world::xorshift(self.random_state.load(Ordering::Relaxed));
        self.random_state.store(next, Ordering::Relaxed);
        world::world_number(next)
    }

    fn lock_open(&self) -> MutexGuard<'_, HashMap<u64, TcpStream>> {
        lock(&self.open)
    }

    fn lock_workers(&self) -> MutexGuard<'_, Vec<JoinHandle<()>>> {
        lock(&self.workers)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.is_stopping() {
            return;
        }
        let Ok(stream) = stream else { continue };
        let id = shared.next_connection.fetch_add(1, Ordering::Relaxed);
        if let Ok(clone) = stream.try_clone() {
            shared.lock_open().insert(id, clone);
        }
        let worker = {
            let shared = Arc::clone(shared);
            std::thread::Builder::new()
                .name("contract-conn".into())
                .spawn(move || {
                    conn::serve_connection(stream, &shared);
                    shared.lock_open().remove(&id);
                })
        };
        let mut workers = shared.lock_workers();
        workers.retain(|worker| !worker.is_finished());
        if let Ok(worker) = worker {
            workers.push(worker);
        }
    }
}
