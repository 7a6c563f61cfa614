//! `corobench load URL`: one load run against one URL.

use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use clap::{Args, ValueEnum};
use corobench_live::LoadView;
use corobench_load::{
    Backend, BackendChoice, Endpoint, LoadConfig, LoadError, LoadRun, RequestTemplate, Schedule,
    Setting, StopAfter, limits,
};
use corobench_model::{LoadReport, LoadWarning};
use corobench_target::CpuSet;

use super::hints;
use super::load_h2::H2Args;
use super::load_tls::TlsArgs;
use super::load_watch;
use crate::exit::{self, Exit};
use crate::{signals, values};
use corobench_report::load_summary;

/// Flags of `corobench load`, in the wrk / oha tradition.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench load -c 50 -d 10s http://127.0.0.1:8080/plaintext\n  \
    corobench load -R 20000 -d 30s --cpus 1 http://127.0.0.1:8080/json\n  \
    corobench load -n 1000 -X POST --body-file payload.bin http://127.0.0.1:8080/upload\n  \
    corobench load -c 256 --pipeline 16 -d 10s http://127.0.0.1:8080/plaintext\n  \
    corobench load -c 100 --no-keepalive -d 10s http://127.0.0.1:8080/plaintext\n  \
    corobench load -c 50 -d 10s --ca ca.pem https://127.0.0.1:8443/plaintext\n  \
    corobench load -c 50 --no-keepalive --no-tls-resume --insecure -d 10s https://127.0.0.1:8443/json\n  \
    corobench load --h2c -c 10 -m 10 -d 10s http://127.0.0.1:8080/plaintext\n  \
    corobench load --h2 -c 1 -m 100 -d 10s --ca ca.pem https://127.0.0.1:8443/plaintext\n  \
    corobench load --json --warmup 2s -d 10s --start-at 2026-11-24T08:00:00Z http://10.0.0.2:8080/json")]
pub struct LoadArgs {
    /// The URL to load (http:// or https://), e.g. http://127.0.0.1:8080/plaintext
    pub url: String,

    /// Connections kept open (split evenly over the threads)
    #[arg(short = 'c', long, default_value_t = corobench_spec::DEFAULT_CONNECTIONS, value_parser = parse_connections, value_name = "N")]
    pub connections: u32,

    /// Generator threads, each with its own event loop
    #[arg(short = 't', long, default_value_t = 1, value_parser = parse_threads, value_name = "N")]
    pub threads: u32,

    /// Length of the measured window, up to 24h [default: 5s]
    #[arg(short = 'd', long, value_parser = parse_window, value_name = "DURATION", conflicts_with = "requests")]
    pub duration: Option<Duration>,

    /// Stop after exactly N requests got an outcome (a response or an error),
    /// instead of a duration; N up to 2^53
    #[arg(short = 'n', long, value_parser = parse_requests, value_name = "N")]
    pub requests: Option<u64>,

    /// Load sent before the measured window, not recorded; up to 24h
    /// [default: 1s]
    #[arg(long, value_parser = parse_warmup, value_name = "DURATION")]
    pub warmup: Option<Duration>,

    /// Open loop: offer this many requests per second in total, measuring
    /// latency from each request's intended send time (e.g. 20000 or 20k)
    #[arg(short = 'R', long, value_parser = values::parse_rate, value_name = "REQ/S")]
    pub rate: Option<f64>,

    /// Open loop: every connection completes one request (not recorded)
    /// before the schedule begins, so a server slow to accept or to start
    /// a worker for a new connection does not show as tail latency
    #[arg(long, requires = "rate")]
    pub prime: bool,

    /// Open loop: requests due within this long of a send leave with it,
    /// early (0 sends each at its own time; at most 10ms). A longer tick
    /// costs corobench less CPU per request and shows the server bursts
    /// [default: 50us]
    #[arg(long, requires = "rate", value_parser = parse_tick, value_name = "DURATION")]
    pub tick: Option<Duration>,

    /// Stamp each response when the kernel received it (SO_TIMESTAMPING)
    /// rather than when corobench read it
    #[arg(long)]
    pub kernel_stamps: bool,

    /// With --kernel-stamps on the epoll backend: stamp each request too
    /// when the kernel sent it, and count its latency from then
    #[arg(long, requires = "kernel_stamps")]
    pub kernel_send_stamps: bool,

    /// Open a new connection for every request and close it after the
    /// response (`Connection: close`); the connect is part of each request's
    /// latency, and -c bounds the connections open at once
    #[arg(long)]
    pub no_keepalive: bool,

    /// Keep up to N requests in flight on each connection (HTTP/1.1
    /// pipelining; TechEmpower's plaintext test uses 16); closed loop only
    #[arg(long, default_value_t = 1, value_parser = parse_pipeline, value_name = "N")]
    pub pipeline: u32,

    /// Pin generator threads (round-robin) to these CPUs, e.g. 1 or 2-3 or 1,3
    #[arg(long, value_name = "LIST", value_parser = values::parse_cpus)]
    pub cpus: Option<CpuSet>,

    /// HTTP method
    #[arg(short = 'X', long, default_value = "GET")]
    pub method: String,

    /// Extra request header, repeatable: -H 'Accept: application/json'
    #[arg(short = 'H', long = "header", value_parser = values::parse_header, value_name = "NAME: VALUE")]
    pub headers: Vec<(String, String)>,

    /// Request body
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,

    /// Request body read from a file (64 MiB at most)
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,

    /// A request without a complete response after this long counts as a timeout (up to 24h)
    #[arg(long, value_parser = parse_timeout, default_value = "10s", value_name = "DURATION")]
    pub timeout: Duration,

    /// Event-loop backend of the generator threads; auto is io_uring where
    /// the kernel allows it, epoll otherwise
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,

    /// Open the measured window at this wall-clock instant, so that several
    /// generators measure the same time: UTC RFC 3339 (2026-11-24T08:00:00Z)
    /// or Unix seconds (1795507200.5), within 24h. The warm-up runs just
    /// before it; a past instant starts the window at once
    #[arg(long, value_parser = parse_start_at, value_name = "INSTANT")]
    pub start_at: Option<SystemTime>,

    /// Run the machine-speed probe on the generator's CPUs before the load
    /// and put its speed in the report (probe_mb_per_s)
    #[arg(long)]
    pub probe: bool,

    /// Print the full report as JSON on stdout (schema: docs/output.md),
    /// with the kernel counters of the generator's threads over its window
    #[arg(long)]
    pub json: bool,

    /// Latency percentiles to show, e.g. 50,90,99,99.9
    #[arg(long, value_delimiter = ',', value_parser = values::parse_percentile, value_name = "LIST")]
    pub percentiles: Vec<f64>,

    /// A progress line instead of the live view (the view shows only when
    /// stdout and stderr are terminals)
    #[arg(long)]
    pub no_tui: bool,

    #[command(flatten)]
    pub tls: TlsArgs,

    #[command(flatten)]
    pub h2: H2Args,
}

/// `--backend` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    Auto,
    Epoll,
    #[value(name = "io_uring", alias = "io-uring", alias = "uring")]
    IoUring,
}

impl From<BackendArg> for BackendChoice {
    fn from(arg: BackendArg) -> Self {
        match arg {
            BackendArg::Auto => Self::Auto,
            BackendArg::Epoll => Self::Fixed(Backend::Epoll),
            BackendArg::IoUring => Self::Fixed(Backend::IoUring),
        }
    }
}

/// The backend to run: `auto` becomes io_uring where the kernel allows it.
fn resolve_backend(arg: BackendArg) -> Backend {
    let (backend, passed_over) = corobench_load::resolve_backend(arg.into());
    if let Some(why) = passed_over {
        eprintln!("note: using the epoll backend: io_uring is not usable here ({why})");
    }
    backend
}

/// Runs `corobench load`.
///
/// # Errors
/// Bad flags (exit 2), an unreachable server (exit 3), a run in which no
/// request succeeded (exit 1).
pub fn run(args: &LoadArgs) -> anyhow::Result<Exit> {
    // Kept for the whole load: `--ca -`'s certificates.
    let stdin_ca = args.tls.ca_from_stdin()?;
    let config = config_from(args, stdin_ca.as_ref().map(tempfile::NamedTempFile::path))?;
    let (warmup, config_window) = (config.warmup, config.stop);
    let view = (!args.no_tui && corobench_live::available()).then(|| LoadView::new(&config));
    let mut load = LoadRun::prepare(config)
        .and_then(|load| load.kernel_stamps(args.kernel_stamps))
        .and_then(|load| load.kernel_send_stamps(args.kernel_send_stamps))
        .and_then(|load| match args.tick {
            Some(tick) => load.send_tick(tick),
            None => Ok(load),
        })
        .map_err(hints::load)?
        .priming(args.prime);
    let probe = args.probe.then(|| probe(args)).flatten();
    // Ctrl-C is handled from the first word on: a wait announced can be
    // interrupted.
    let stop = signals::stop_flag()?;
    if let Some(start_at) = args.start_at {
        announce_start(start_at, warmup);
        load = load.starting_at(start_at).map_err(hints::load)?;
    }
    let window = match config_window {
        StopAfter::Duration(window) => Some(window),
        StopAfter::Requests(_) => None,
    };
    if view.is_some() {
        load = load.live_view();
    }
    let mut report = load_watch::run_with_progress(load, view, args.json.then_some(window), &stop)?;
    report.probe_mb_per_s = probe;
    super::shared::print_load_report(&report, args.json, &args.percentiles, load_summary::render)?;
    check_something_succeeded(&report)?;
    Ok(Exit::Success)
}

/// `--probe`: the machine-speed probe on `--cpus` (every CPU without it);
/// one that cannot run is said on stderr and left out of the report.
fn probe(args: &LoadArgs) -> Option<f64> {
    corobench_engine::machine_probe::on_host(args.cpus.as_ref())
        .map_err(|why| eprintln!("warning: --probe: the machine-speed probe could not run: {why}"))
        .ok()
}

fn config_from(args: &LoadArgs, stdin_ca: Option<&std::path::Path>) -> anyhow::Result<LoadConfig> {
    let mut endpoint = Endpoint::from_url(&args.url).map_err(hints::load)?;
    args.tls.apply(&mut endpoint, stdin_ca)?;
    let http2 = args.h2.resolve(&endpoint)?;
    let body = match (&args.body, &args.body_file) {
        (Some(text), _) => text.clone().into_bytes(),
        (None, Some(path)) => read_body_file(path)?,
        (None, None) => Vec::new(),
    };
    let stop = match (args.requests, args.duration) {
        (Some(n), _) => StopAfter::Requests(n),
        (None, duration) => {
            StopAfter::Duration(duration.unwrap_or(corobench_spec::DEFAULT_DURATION))
        }
    };
    let config = LoadConfig {
        endpoint,
        request: RequestTemplate {
            method: args.method.clone(),
            headers: args.headers.clone(),
            body,
        },
        threads: args.threads,
        schedule: args
            .rate
            .map_or(Schedule::closed(args.connections), |rate_per_s| {
                Schedule::open(rate_per_s, args.connections)
            })
            .with_keepalive(!args.no_keepalive)
            .with_pipeline(args.pipeline),
        stop,
        warmup: args.warmup.unwrap_or(corobench_spec::DEFAULT_WARMUP),
        timeout: args.timeout,
        cpus: args.cpus.as_ref().map(|set| set.iter().collect()),
        backend: resolve_backend(args.backend),
        http2,
        background: args.h2.background(),
    };
    config.validate().map_err(hints::load)?;
    Ok(config)
}

/// The body of `--body-file`, refused past [`limits::MAX_BODY_BYTES`]
/// without reading more than one byte beyond it (`/dev/zero` never ends).
fn read_body_file(path: &Path) -> anyhow::Result<Vec<u8>> {
    let cannot_read =
        |e: std::io::Error| exit::usage(format!("cannot read --body-file {}: {e}", path.display()));
    let file = File::open(path).map_err(cannot_read)?;
    let mut body = Vec::new();
    let cap = u64::try_from(limits::MAX_BODY_BYTES).unwrap_or(u64::MAX);
    file.take(cap.saturating_add(1))
        .read_to_end(&mut body)
        .map_err(cannot_read)?;
    if body.len() > limits::MAX_BODY_BYTES {
        return Err(exit::usage(format!(
            "--body-file {}: a request body can be at most 64 MiB ({} bytes)",
            path.display(),
            limits::MAX_BODY_BYTES
        )));
    }
    Ok(body)
}

/// `-c`: a connection count the file-descriptor limit allows.
fn parse_connections(text: &str) -> Result<u32, String> {
    let range = "from 1 up to what the file-descriptor limit allows";
    parse_checked_count(text, "connection count", range, |connections| {
        if connections == 0 {
            return Err(LoadError::config(
                &[Setting::Connections],
                "connections (-c) must be at least 1",
            ));
        }
        corobench_load::check_fd_limit(connections)
    })
}

/// `-t`: a thread count in `1..=limits::MAX_THREADS`.
fn parse_threads(text: &str) -> Result<u32, String> {
    let range = format!("from 1 to {}", limits::MAX_THREADS);
    parse_checked_count(text, "thread count", &range, limits::check_threads)
}

/// `--pipeline`: a depth in `1..=limits::MAX_PIPELINE`.
fn parse_pipeline(text: &str) -> Result<u32, String> {
    let range = format!("from 1 to {}", limits::MAX_PIPELINE);
    parse_checked_count(text, "pipeline depth", &range, |depth| {
        limits::check_wire_mode(&Schedule::closed(1).with_pipeline(depth))
    })
}

/// `-n`: a request count in `1..=limits::MAX_REQUESTS`.
fn parse_requests(text: &str) -> Result<u64, String> {
    let range = format!("from 1 to 2^53 ({})", limits::MAX_REQUESTS);
    parse_checked_count(text, "request count", &range, limits::check_requests)
}

/// A whole number that also passes `check`; a number that does not even
/// fit the type is told the `range` too.
fn parse_checked_count<T: std::str::FromStr + Copy>(
    text: &str,
    what: &str,
    range: &str,
    check: impl Fn(T) -> Result<(), LoadError>,
) -> Result<T, String> {
    let count: T = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a {what}: use a whole number {range}"))?;
    check(count).map_err(|e| e.to_string())?;
    Ok(count)
}

/// `-d`: longer than zero, at most a day.
fn parse_window(text: &str) -> Result<Duration, String> {
    parse_checked_duration(text, |d| {
        limits::check_positive_duration(Setting::Duration, d)
    })
}

/// `--warmup`: at most a day.
fn parse_warmup(text: &str) -> Result<Duration, String> {
    parse_checked_duration(text, |d| limits::check_duration(Setting::Warmup, d))
}

/// `--tick`: zero up to [`limits::MAX_TICK`].
fn parse_tick(text: &str) -> Result<Duration, String> {
    parse_checked_duration(text, limits::check_tick)
}

/// `--timeout`: longer than zero, at most a day.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    parse_checked_duration(text, |d| {
        limits::check_positive_duration(Setting::Timeout, d)
    })
}

/// A duration of at most a day that also passes `check`.
fn parse_checked_duration(
    text: &str,
    check: impl Fn(Duration) -> Result<(), LoadError>,
) -> Result<Duration, String> {
    let duration = parse_at_most_a_day(text)?;
    check(duration).map_err(|e| e.to_string())?;
    Ok(duration)
}

/// A duration of at most [`limits::MAX_DURATION`]. A bare number of seconds
/// is range-checked before it becomes a `Duration`, which cannot hold
/// numbers past 2^64 seconds.
fn parse_at_most_a_day(text: &str) -> Result<Duration, String> {
    let too_long = || format!("{text:?} is longer than 24h, the longest duration a load run takes");
    if let Ok(seconds) = text.trim().parse::<f64>() {
        if seconds.is_nan() || seconds > limits::MAX_DURATION.as_secs_f64() {
            return Err(too_long());
        }
    }
    let duration = values::parse_duration(text).map_err(|e| e.to_string())?;
    if duration > limits::MAX_DURATION {
        return Err(too_long());
    }
    Ok(duration)
}

/// `--start-at`: an instant within a day of now.
fn parse_start_at(text: &str) -> Result<SystemTime, String> {
    let start_at = values::parse_instant(text)?;
    corobench_load::check_start_at(start_at, SystemTime::now()).map_err(|e| e.to_string())?;
    Ok(start_at)
}

/// Says on stderr what `--start-at` will do: wait, shorten the warm-up, or
/// start late.
fn announce_start(start_at: SystemTime, warmup: Duration) {
    let when = humantime::format_rfc3339_micros(start_at);
    match start_at.duration_since(SystemTime::now()) {
        Ok(ahead) if ahead >= warmup => eprintln!(
            "waiting {:.1}s: the warm-up begins {:.1}s before {when}, when the window opens",
            (ahead - warmup).as_secs_f64(),
            warmup.as_secs_f64()
        ),
        Ok(ahead) => eprintln!(
            "note: {when} is {:.3}s away, less than the {:.1}s warm-up: the warm-up is \
             shortened so that the window still opens then",
            ahead.as_secs_f64(),
            warmup.as_secs_f64()
        ),
        Err(late) => eprintln!(
            "note: --start-at {when} passed {:.3}s ago: the window opens at once, without \
             warm-up; start_offset_us in the report says how late",
            late.duration().as_secs_f64()
        ),
    }
}

/// A run where every request failed is not a measurement: say why, exit 1.
fn check_something_succeeded(report: &LoadReport) -> anyhow::Result<()> {
    if report.status.succeeded() > 0 {
        return Ok(());
    }
    let kinds: Vec<String> = report
        .errors
        .by_kind()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    let mut why = if kinds.is_empty() {
        "no request completed in the measured window".to_string()
    } else {
        kinds.join(", ")
    };
    if let Some(tls) = report
        .warnings
        .iter()
        .find(|w| matches!(w, LoadWarning::PortSpeaksTls { .. }))
    {
        why = format!("{why}; {tls}");
    }
    Err(exit::check_failed(format!(
        "no request succeeded against {}: {why}",
        report.url
    )))
}
