//! The knob server: an in-process HTTP/1.1 server on `127.0.0.1:0` whose
//! behaviour [`Knobs`] sets. One thread runs an epoll loop (through mio) over
//! every connection, so ten thousand idle keep-alive connections cost only
//! their buffers.

mod conn;
mod event_loop;
mod responses;
mod wire;

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::knobs::Knobs;
use crate::tls::{TestCerts, TlsKnobs};
use event_loop::EventLoop;
use responses::Responses;

/// A running knob server; dropping it stops the server and joins its thread.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    counters: Arc<Counters>,
    control: Arc<Control>,
    thread: Option<JoinHandle<()>>,
    /// TLS: the certificates it serves, and the CA written for clients.
    certs: Option<(TestCerts, PathBuf)>,
}

impl TestServer {
    /// Starts a server with these knobs.
    ///
    /// # Panics
    /// When no socket or thread can be had (see [`TestServer::try_start`]).
    #[must_use]
    pub fn start(knobs: Knobs) -> Self {
        Self::try_start(knobs).expect("the test server could not start (sockets or threads)")
    }

    /// Starts a server with these knobs.
    ///
    /// # Errors
    /// Binding the listener, creating the poller or spawning its thread failed.
    pub fn try_start(knobs: Knobs) -> io::Result<Self> {
        Self::try_start_on(0, knobs)
    }

    /// Starts a server with these knobs on `127.0.0.1:port` (0: a free port).
    ///
    /// # Errors
    /// Binding the listener, creating the poller or spawning its thread failed.
    pub fn try_start_on(port: u16, knobs: Knobs) -> io::Result<Self> {
        let counters = Arc::new(Counters::default());
        let tls = knobs.tls.as_ref().map(ServerTls::new).transpose()?;
        let certs = tls.as_ref().map(|t| t.certs.clone());
        let (event_loop, control) = EventLoop::new(port, knobs, (Arc::clone(&counters), tls))?;
        let addr = event_loop.local_addr()?;
        let certs = certs
            .map(|certs| {
                let path = std::env::temp_dir().join(format!(
                    "corobench-testkit-{}-{}-ca.pem",
                    std::process::id(),
                    addr.port()
                ));
                std::fs::write(&path, certs.ca_pem()).map(|()| (certs, path))
            })
            .transpose()?;
        let thread = std::thread::Builder::new()
            .name("testkit-server".into())
            .spawn(move || event_loop.run())?;
        Ok(Self {
            addr,
            counters,
            control,
            thread: Some(thread),
            certs,
        })
    }

    /// The address the server listens on (`127.0.0.1`, a free port).
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT{path}` (`https://` when it serves TLS).
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.certs.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}{path}", self.addr)
    }

    /// TLS: the file holding the CA that signed the server's certificate
    /// (removed when the server is dropped).
    #[must_use]
    pub fn ca_file(&self) -> Option<&std::path::Path> {
        self.certs.as_ref().map(|(_, path)| path.as_path())
    }

    /// TLS: the CA that signed the server's certificate, in PEM.
    #[must_use]
    pub fn ca_pem(&self) -> Option<&str> {
        self.certs.as_ref().map(|(certs, _)| certs.ca_pem())
    }

    /// What the server has seen so far.
    #[must_use]
    pub fn counters(&self) -> CounterSnapshot {
        self.counters.snapshot()
    }

    /// The distinct request targets (path and query, exactly as they came
    /// on the request line) received so far, in the order first seen; at
    /// most [`MAX_TARGETS_KEPT`].
    #[must_use]
    pub fn request_targets(&self) -> Vec<String> {
        self.counters
            .targets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Stops answering from now on for `length`, then answers everything owed.
    pub fn stall_for(&self, length: Duration) {
        self.stall_handle().stall_for(length);
    }

    /// A handle that can start stalls from any thread, even while the
    /// server itself is owned elsewhere.
    #[must_use]
    pub fn stall_handle(&self) -> StallHandle {
        StallHandle {
            control: Arc::clone(&self.control),
        }
    }
}

/// Starts stalls of a [`TestServer`]; after the server is dropped it does nothing.
#[derive(Debug, Clone)]
pub struct StallHandle {
    control: Arc<Control>,
}

impl StallHandle {
    /// Stops answering from now on for `length`, then answers everything owed.
    pub fn stall_for(&self, length: Duration) {
        let from = Instant::now();
        self.control.send(Command::Stall(Window {
            from,
            until: from + length,
        }));
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.control.send(Command::Shutdown);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Some((_, path)) = self.certs.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A TLS server's certificates and configuration.
#[derive(Debug)]
struct ServerTls {
    certs: TestCerts,
    config: Arc<rustls::ServerConfig>,
    knobs: TlsKnobs,
}

impl ServerTls {
    fn new(knobs: &TlsKnobs) -> io::Result<Self> {
        let certs = TestCerts::new(knobs.certificate);
        Ok(Self {
            config: certs.server_config(knobs)?,
            certs,
            knobs: knobs.clone(),
        })
    }
}

/// The most distinct request targets a [`TestServer`] remembers.
pub const MAX_TARGETS_KEPT: usize = 64;

/// Counts kept by the server as it runs.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    connections: AtomicU64,
    open: AtomicU64,
    requests: AtomicU64,
    responses: AtomicU64,
    /// Distinct request targets, first seen first.
    targets: Mutex<Vec<String>>,
}

/// A reading of the server's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CounterSnapshot {
    /// Connections accepted since the start.
    pub connections_accepted: u64,
    /// Connections open now.
    pub open_connections: u64,
    /// Complete request heads read.
    pub requests_received: u64,
    /// Responses handed to the socket.
    pub responses_sent: u64,
}

impl Counters {
    fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot {
            connections_accepted: self.connections.load(Ordering::Relaxed),
            open_connections: self.open.load(Ordering::Relaxed),
            requests_received: self.requests.load(Ordering::Relaxed),
            responses_sent: self.responses.load(Ordering::Relaxed),
        }
    }

    fn count_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Remembers a request target not seen before (copied only then).
    fn saw_target(&self, target: &str) {
        let mut targets = self.targets.lock().unwrap_or_else(PoisonError::into_inner);
        if targets.len() < MAX_TARGETS_KEPT && !targets.iter().any(|t| t == target) {
            targets.push(target.to_owned());
        }
    }

    fn count_response(&self) {
        self.responses.fetch_add(1, Ordering::Relaxed);
    }
}

/// Everything a connection needs to serve itself.
#[derive(Debug)]
struct Context {
    knobs: Knobs,
    responses: Responses,
    counters: Arc<Counters>,
    stalls: Stalls,
    tls: Option<ServerTls>,
}

/// A span of time.
#[derive(Debug, Clone, Copy)]
struct Window {
    from: Instant,
    until: Instant,
}

/// The stall windows, scheduled and on demand.
#[derive(Debug, Default)]
struct Stalls {
    windows: Vec<Window>,
}

impl Stalls {
    /// When the stall covering `now` ends, if one does.
    fn held_until(&self, now: Instant) -> Option<Instant> {
        self.windows
            .iter()
            .filter(|w| w.from <= now && now < w.until)
            .map(|w| w.until)
            .max()
    }
}

/// Requests from the owning [`TestServer`] to its loop.
#[derive(Debug)]
enum Command {
    Stall(Window),
    Shutdown,
}

/// The mailbox of the loop and the waker that makes it look.
#[derive(Debug)]
struct Control {
    waker: mio::Waker,
    commands: Mutex<Vec<Command>>,
}

impl Control {
    fn send(&self, command: Command) {
        self.commands
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(command);
        // A failed wake only happens when the loop is gone already.
        let _ = self.waker.wake();
    }

    fn take(&self) -> Vec<Command> {
        std::mem::take(&mut *self.commands.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
