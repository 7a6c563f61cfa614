//! The corobench load generator engine.
//!
//! One OS thread per generator core, each with its own non-blocking event
//! loop (epoll or io_uring) over its share of the connections. The request is
//! serialised once; responses are framed, never stored; outcomes are recorded
//! into per-thread HDR histograms and counters that are merged when the run
//! ends. Closed loop (each connection sends when its previous response is
//! complete) and open loop (a fixed rate; latency measured from each request's
//! intended send time as well as from its actual send) share one driver.
//!
//! This crate prints nothing, stores nothing and computes no statistics.

mod clock;
mod cmsg;
mod config;
mod conn;
mod core;
mod driver;
mod epoll;
mod error;
mod h2;
mod idle;
pub mod limits;
mod live;
pub mod merge;
mod os;
mod pacer;
mod progress;
mod ready;
mod recorder;
mod report;
pub mod response;
mod session;
mod stamps;
mod start;
mod timeline;
mod tls;
mod uring;

use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::{Duration, SystemTime};

pub use config::{Endpoint, LoadConfig, RequestTemplate, StopAfter};
pub use corobench_model::{Backend, BackendChoice, Schedule, ScheduleKind};
pub use corobench_model::{BackgroundRecord, LoadReport};
pub use error::{LoadError, ProtocolFix, Setting};
pub use h2::{Http2Options, MAX_STREAMS};
pub use idle::IdleConnections;
pub use live::{LIVE_INTERVAL, LiveHandshakes, LiveSnapshot, LiveStreams};
pub use merge::{MergeError, MergeInput, merge};
pub use progress::{Progress, ProgressSnapshot};
pub use start::check_start_at;
pub use tls::{
    CA_INPUT_LIMIT, CaInputError, DEFAULT_ALPN, HandshakeRefusal, TlsError, TlsOptions,
    TlsProvider, TlsVersions, ca_file_from, client_config as tls_client_config,
};

/// The name every generator thread starts with (`corobench-load-0`, ...),
/// by which its kernel counters find it among the process's threads.
pub const THREAD_NAME_PREFIX: &str = "corobench-load-";

use crate::clock::{Clock, ns};
use crate::core::{Shared, ThreadPace, ThreadPlan, ThreadResult};
use crate::ready::ReadyGate;
use crate::start::Origin;
use crate::tls::TlsSetup;

/// File descriptors the generator needs besides one per connection.
pub(crate) const SPARE_FDS: u64 = 64;

/// A load run that has been checked and is ready to start.
#[derive(Debug)]
pub struct LoadRun {
    config: LoadConfig,
    request: Vec<u8>,
    progress: Arc<Progress>,
    cancel: Arc<AtomicBool>,
    start_at: Option<SystemTime>,
    prime: bool,
    kernel_stamps: bool,
    send_stamps: bool,
    /// Open loop: requests due within this long of a send leave with it.
    tick: Duration,
    tls: Option<TlsSetup>,
    h2: Option<h2::H2Setup>,
}

impl LoadRun {
    /// Validates the configuration, raises the file-descriptor limit and
    /// checks that the server accepts a connection (and, over TLS, that its
    /// handshake succeeds).
    ///
    /// # Errors
    /// A bad configuration, too few file descriptors, an unreachable server,
    /// a TLS setting that cannot be used or a handshake the server fails.
    pub fn prepare(config: LoadConfig) -> Result<Self, LoadError> {
        config.validate()?;
        check_fd_limit(config.schedule.connections)?;
        let schedule = config.schedule;
        let request = config
            .request
            .serialize_with(&config.endpoint, !schedule.keepalive)?;
        limits::check_pipelined_bytes(request.len(), schedule.pipeline)?;
        let h2 = config
            .http2
            .map(|options| h2_setup(&config, options))
            .transpose()?;
        let tls = tls_options(&config)
            .as_ref()
            .map(|options| TlsSetup::new(options, config.endpoint.host_name()))
            .transpose()?;
        if tls.as_ref().is_some_and(|t| t.ktls) && config.backend != Backend::Epoll {
            return Err(LoadError::config(
                &[Setting::Ktls, Setting::Backend],
                "kernel TLS runs on the epoll backend only",
            ));
        }
        let connect_timeout = config.timeout.min(Duration::from_secs(5));
        match TcpStream::connect_timeout(&config.endpoint.addr, connect_timeout) {
            Ok(stream) => check_protocol(stream, &config, tls.as_ref(), connect_timeout)?,
            // No local port free says nothing of the server: the run counts
            // each such connect as `ports_exhausted` and names the fix.
            Err(source) if os::is_port_exhaustion(&source) => {}
            Err(source) => {
                return Err(LoadError::Connect {
                    addr: config.endpoint.addr,
                    source,
                });
            }
        }
        let progress = Arc::new(Progress::new(config.threads as usize));
        Ok(Self {
            config,
            request,
            progress,
            cancel: Arc::new(AtomicBool::new(false)),
            start_at: None,
            prime: false,
            kernel_stamps: false,
            tick: Duration::from_nanos(pacer::TICK_NS),
            send_stamps: false,
            tls,
            h2,
        })
    }

    /// Opens the measured window at `start_at` by the wall clock instead of
    /// after the warm-up: [`Self::run`] waits until `start_at - warmup`, so
    /// that the warm-up ends then. A start already (nearly) past shortens
    /// the warm-up, down to none; the report says how far the window's
    /// actual start was from `start_at`.
    ///
    /// # Errors
    /// A `start_at` more than 24 h away from now.
    pub fn starting_at(mut self, start_at: SystemTime) -> Result<Self, LoadError> {
        check_start_at(start_at, SystemTime::now())?;
        self.start_at = Some(start_at);
        Ok(self)
    }

    /// Open loop: has every connection complete one request before the
    /// schedule begins (not recorded), so that a server's slow first
    /// answers on a new connection (accepting it, starting a worker for it)
    /// are not charged to the steady rate. Other schedules ignore it.
    #[must_use]
    pub fn priming(mut self, prime: bool) -> Self {
        self.prime = prime;
        self
    }

    /// Stamps each response with the moment the kernel received it
    /// (`SO_TIMESTAMPING`, software) rather than when the event loop read
    /// it, so that the generator's own wake-up is not part of the latency.
    /// The io_uring backend then receives with multishot `recvmsg` (Linux 6.0).
    ///
    /// # Errors
    /// The io_uring backend on a kernel older than 6.0.
    pub fn kernel_stamps(mut self, on: bool) -> Result<Self, LoadError> {
        if on && self.tls.as_ref().is_some_and(|t| t.ktls) {
            return Err(LoadError::config(
                &[Setting::KernelStamps, Setting::Ktls],
                "kernel receive stamps and kernel TLS both read control messages of their own; \
                 choose one",
            ));
        }
        if on && self.config.backend == Backend::IoUring {
            if let Err(release) = stamps::uring_can_stamp() {
                return Err(LoadError::config(
                    &[Setting::KernelStamps, Setting::Backend],
                    format!(
                        "kernel receive stamps on the io_uring backend need Linux 6.0 or newer \
                         (multishot recvmsg), this is {release}; the epoll backend reads them on any",
                    ),
                ));
            }
        }
        self.kernel_stamps = on;
        Ok(self)
    }

    /// Open loop: requests due within `tick` of a send leave with it, up to
    /// `tick` before their intended time (the default is 50 µs). Zero sends
    /// each at its own time, at the price of a wake-up for nearly every
    /// request; a longer tick costs the generator less per request and
    /// shows the server bursts of that length. A request that leaves early
    /// counts its latency from its actual send.
    ///
    /// # Errors
    /// A tick longer than [`limits::MAX_TICK`], or a closed loop.
    pub fn send_tick(mut self, tick: Duration) -> Result<Self, LoadError> {
        if self.config.schedule.rate_per_s().is_none() {
            return Err(LoadError::config(
                &[Setting::Tick, Setting::Rate],
                "a tick paces an open loop's sends: give a rate (-R) with it",
            ));
        }
        limits::check_tick(tick)?;
        self.tick = tick;
        Ok(self)
    }

    /// With kernel receive stamps on the epoll backend: stamps each request
    /// too when the kernel sends it (`SO_TIMESTAMPING` software send stamps,
    /// read from the socket's error queue), and counts its latency from
    /// then rather than from the clock read before the write.
    ///
    /// # Errors
    /// Without kernel receive stamps, or on the io_uring backend.
    pub fn kernel_send_stamps(mut self, on: bool) -> Result<Self, LoadError> {
        if on && !self.kernel_stamps {
            return Err(LoadError::config(
                &[Setting::KernelSendStamps, Setting::KernelStamps],
                "kernel send stamps come with receive stamps: ask for both",
            ));
        }
        if on && self.config.backend != Backend::Epoll {
            return Err(LoadError::config(
                &[Setting::KernelSendStamps, Setting::Backend],
                "kernel send stamps are read on the epoll backend only",
            ));
        }
        self.send_stamps = on;
        Ok(self)
    }

    /// Has every generator thread publish its latency histogram, statuses,
    /// errors and open connections for a live view, at most every
    /// [`LIVE_INTERVAL`] (read them with [`Progress::live`]). Call it before
    /// [`Self::progress`]: it replaces the counters.
    #[must_use]
    pub fn live_view(mut self) -> Self {
        self.progress = Arc::new(Progress::with_live_view(self.config.threads as usize));
        self
    }

    /// Live counters to show while the run goes on.
    #[must_use]
    pub fn progress(&self) -> Arc<Progress> {
        Arc::clone(&self.progress)
    }

    /// Setting this flag ends the run early; what was measured is still reported.
    #[must_use]
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.cancel)
    }

    /// Runs the load to the end and merges every thread's measurements.
    ///
    /// # Errors
    /// When a generator thread cannot start its event loop.
    pub fn run(self) -> Result<LoadReport, LoadError> {
        let config = &self.config;
        let origin = match self.start_at {
            Some(at) => Origin::at(at, config.warmup, &self.cancel),
            None => Origin::now(config.warmup),
        };
        let clock = Clock::new(origin.instant);
        let window_start_ns = origin.window_start_ns;
        let schedule = config.schedule;
        let ktls = self.tls.as_ref().is_some_and(|t| t.ktls);
        let kernel_stamps =
            self.kernel_stamps || stamps::open_loop_wants(config, ktls, self.h2.is_some());
        let shared = Arc::new(Shared {
            clock,
            head_request: config.request.method == "HEAD",
            requests: self
                .request
                .repeat(usize::try_from(schedule.pipeline).unwrap_or(1)),
            request_len: self.request.len(),
            keepalive: schedule.keepalive,
            pipeline: schedule.pipeline,
            addr: config.endpoint.addr,
            timeout_ns: ns(config.timeout),
            window_start_ns,
            warmup_after_ready_ns: origin.warmup_after_ready_ns,
            duration_ns: match config.stop {
                StopAfter::Duration(d) => Some(ns(d)),
                StopAfter::Requests(_) => None,
            },
            ready: ReadyGate::new(config.threads as usize),
            prime: self.prime,
            kernel_stamps,
            reads_can_wait: kernel_stamps && stamps::reads_can_wait(&schedule, self.h2.is_some()),
            send_stamps: self.send_stamps,
            tick_ns: ns(self.tick),
            tls: self.tls,
            h2: self.h2,
            base_unix_ns: start::unix_ns(origin.wall),
            cancel: self.cancel,
            progress: self.progress,
        });
        let results = run_threads(&shared, config)?;
        let tls = shared.tls.as_ref().map(|setup| &setup.facts);
        let h2 = shared.h2.as_ref();
        let mut report = report::build(config, &results, &origin, (kernel_stamps, tls, h2));
        if let Some(stamps) = report.kernel_stamps.as_mut() {
            stamps.send = self.send_stamps;
        }
        if let Some(open) = report.open_loop.as_mut() {
            open.tick_us = Some(self.tick.as_micros().try_into().unwrap_or(u64::MAX));
        }
        Ok(report)
    }
}

/// The TLS options of an `https://` run: HTTP/2 offers `h2` alone by
/// ALPN, so that a server without it refuses rather than falls back.
fn tls_options(config: &LoadConfig) -> Option<TlsOptions> {
    let mut options = config.endpoint.tls.clone()?;
    if config.http2.is_some() {
        options.alpn = vec!["h2".to_owned()];
    }
    Some(options)
}

/// HTTP/2's request block and settings, made once for the run.
fn h2_setup(config: &LoadConfig, options: Http2Options) -> Result<h2::H2Setup, LoadError> {
    let protocol = config.protocol();
    let background = config
        .background
        .as_ref()
        .map(|background| background_request(config, background, protocol.tls))
        .transpose()?;
    Ok(h2::H2Setup {
        request: h2::H2Request::encode(&config.request, &config.endpoint, protocol.tls)?,
        options,
        protocol: protocol.name(),
        background,
    })
}

/// The background request, encoded once: a GET of its path with the
/// measured request's headers, less those that describe a body.
fn background_request(
    config: &LoadConfig,
    background: &BackgroundRecord,
    tls: bool,
) -> Result<h2::Background, LoadError> {
    let endpoint = Endpoint {
        path: config::background_target(background)?,
        ..config.endpoint.clone()
    };
    let template = RequestTemplate {
        method: "GET".to_owned(),
        headers: config
            .request
            .headers
            .iter()
            .filter(|(name, _)| {
                !name.eq_ignore_ascii_case("content-length")
                    && !name.eq_ignore_ascii_case("content-type")
            })
            .cloned()
            .collect(),
        body: Vec::new(),
    };
    Ok(h2::Background {
        request: h2::H2Request::encode(&template, &endpoint, tls)?,
        path: background.path.clone(),
        streams: background.streams,
    })
}

/// On the connection that showed the server is up: the TLS handshake (over
/// HTTP/2, with ALPN `h2` agreed), or the h2c preface answered with SETTINGS.
fn check_protocol(
    stream: TcpStream,
    config: &LoadConfig,
    tls: Option<&TlsSetup>,
    timeout: Duration,
) -> Result<(), LoadError> {
    let server = &config.endpoint.host;
    match (tls, config.http2.is_some()) {
        (Some(setup), http2) => {
            let alpn = tls::probe(stream, setup, server, timeout).map_err(|error| {
                match (http2, &error) {
                    (
                        true,
                        TlsError::Handshake {
                            refusal: HandshakeRefusal::NoAlpn { .. },
                            ..
                        },
                    ) => LoadError::Protocol {
                        asked: Setting::H2,
                        fix: Some(ProtocolFix::Http1),
                        message: format!(
                            "{server} refused ALPN h2 in the TLS handshake: it does not serve \
                             HTTP/2 over TLS here; HTTP/1.1 over TLS can be measured"
                        ),
                    },
                    _ => LoadError::Tls(error),
                }
            })?;
            if http2 {
                h2::probe::check_alpn(server, alpn.as_deref())?;
            }
            Ok(())
        }
        (None, true) => h2::probe::check_h2c(stream, server, timeout),
        (None, false) => Ok(()),
    }
}

/// The backend to use when the user did not choose one: io_uring, which
/// needed less CPU per request than epoll side by side, where this kernel
/// allows it (it can be disabled by `kernel.io_uring_disabled` or a seccomp
/// profile); otherwise epoll, with the reason io_uring was passed over.
#[must_use]
pub fn preferred_backend() -> (Backend, Option<String>) {
    match uring::probe() {
        Ok(()) => (Backend::IoUring, None),
        Err(why) => (Backend::Epoll, Some(why.to_string())),
    }
}

/// The backend to run for a user's choice: a fixed one as it is, `auto` as
/// [`preferred_backend`] decides (with the reason io_uring was passed over).
#[must_use]
pub fn resolve_backend(choice: BackendChoice) -> (Backend, Option<String>) {
    match choice {
        BackendChoice::Fixed(backend) => (backend, None),
        BackendChoice::Auto => preferred_backend(),
    }
}

/// Prepares and runs a load in one call, without progress or cancellation.
///
/// # Errors
/// As [`LoadRun::prepare`] and [`LoadRun::run`].
pub fn run(config: LoadConfig) -> Result<LoadReport, LoadError> {
    LoadRun::prepare(config)?.run()
}

/// Refuses more connections than file descriptors, with advice the kernel
/// can follow: `ulimit -n` can never go above `fs.nr_open`.
///
/// # Errors
/// Too many connections ([`LoadError::FdLimit`]), or a limit that cannot be read.
pub fn check_fd_limit(connections: u32) -> Result<(), LoadError> {
    let limit = os::raise_fd_limit()
        .map_err(|e| LoadError::os("cannot read the file-descriptor limit", e))?;
    let needed = u64::from(connections).saturating_add(SPARE_FDS);
    if needed > limit {
        return Err(LoadError::FdLimit {
            connections,
            needed,
            limit,
            kernel_max: os::nr_open(),
        });
    }
    Ok(())
}

fn run_threads(shared: &Arc<Shared>, config: &LoadConfig) -> Result<Vec<ThreadResult>, LoadError> {
    let handles: Vec<_> = thread_plans(config)
        .into_iter()
        .map(|plan| {
            let shared = Arc::clone(shared);
            let backend = config.backend;
            thread::Builder::new()
                .name(format!("{THREAD_NAME_PREFIX}{}", plan.index))
                .spawn(move || run_thread(backend, &shared, &plan))
                .map_err(|e| LoadError::os("cannot start a generator thread", e))
        })
        .collect::<Result<_, _>>()?;
    handles
        .into_iter()
        .map(|handle| {
            handle
                .join()
                .map_err(|_| LoadError::Thread("it panicked".into()))?
        })
        .collect()
}

/// Runs one generator thread. One that fails ends the run: the others are
/// cancelled, and the open loop's start stops waiting for this one.
fn run_thread(
    backend: Backend,
    shared: &Shared,
    plan: &ThreadPlan,
) -> Result<ThreadResult, LoadError> {
    let result = drive_thread(backend, shared, plan);
    if result.is_err() {
        shared
            .cancel
            .store(true, std::sync::atomic::Ordering::Relaxed);
        shared.ready.arrive(shared.clock.now_ns());
    }
    result
}

fn drive_thread(
    backend: Backend,
    shared: &Shared,
    plan: &ThreadPlan,
) -> Result<ThreadResult, LoadError> {
    if let Some(cpu) = plan.cpu {
        os::pin_this_thread(cpu)
            .map_err(|e| LoadError::os(format!("cannot pin a generator thread to CPU {cpu}"), e))?;
    }
    if plan.pace.is_some() {
        os::tighten_timer_slack();
    }
    match backend {
        Backend::Epoll => epoll::run_thread(shared, plan),
        Backend::IoUring => uring::run_thread(shared, plan),
    }
}

/// Splits connections, requests and rate evenly over the threads.
fn thread_plans(config: &LoadConfig) -> Vec<ThreadPlan> {
    let threads = config.threads;
    let share = |total: u64, i: u32| {
        total / u64::from(threads) + u64::from(u64::from(i) < total % u64::from(threads))
    };
    let expected_seconds = match config.stop {
        StopAfter::Duration(d) => usize::try_from(d.as_secs())
            .unwrap_or(usize::MAX)
            .saturating_add(1),
        StopAfter::Requests(_) => 16,
    };
    (0..threads)
        .map(|i| ThreadPlan {
            index: i as usize,
            connections: u32::try_from(share(u64::from(config.schedule.connections), i))
                .unwrap_or(u32::MAX),
            requests: match config.stop {
                StopAfter::Requests(n) => Some(share(n, i)),
                StopAfter::Duration(_) => None,
            },
            pace: config.schedule.rate_per_s().map(|rate_per_s| ThreadPace {
                rate_per_s: rate_per_s / f64::from(threads),
                phase: f64::from(i) / f64::from(threads),
            }),
            cpu: config
                .cpus
                .as_ref()
                .map(|cpus| cpus[i as usize % cpus.len()]),
            expected_seconds,
        })
        .collect()
}
