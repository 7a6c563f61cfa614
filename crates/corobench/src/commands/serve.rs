//! `corobench serve TARGET`: one target on this host for generators
//! elsewhere. It builds (from the cache), starts, health-checks and
//! verifies the target, prints one JSON line saying where it listens, then
//! one JSON line per resource sample of its process tree, until stdin
//! closes or a signal arrives; then it stops the target and reaps it.
//!
//! Stdin is the lifeline: a coordinator keeps it open (an SSH session
//! does), so a dropped connection closes it and takes the target down.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use corobench_engine::protocol::{Certificates, Hello, Order, ServeEvent};
use corobench_engine::serve::{self, Answerer, Placement, STDERR_TAIL_LINES, Streamed};
use corobench_engine::targets::Targets;
use corobench_engine::workspace::Workspace;
use corobench_target::tls::{CA_FILE, CERT_FILE, KEY_FILE};
use corobench_target::{CpuSet, Manifest, RunCertificates, RunningTarget};

use super::hints;
use super::shared::TargetsDirArg;
use crate::exit::{self, Exit};
use crate::{signals, values};

/// Flags of `corobench serve`.
#[derive(Debug, Args)]
#[command(after_help = "Output on stdout, one JSON object per line: first \
    {\"event\":\"ready\",\"url\":…,\"target\":…,\"pid\":…,\"source_hash\":…}, then \
    {\"event\":\"sample\",…} per sample of the target's processes, and \
    {\"event\":\"stopped\",\"reason\":…} at the end. Progress goes to stderr.\n\n\
    Stdin takes orders, one JSON object a line: {\"order\":\"footprint\",\"id\":N,\
    \"at_unix_ms\":…} is answered by {\"event\":\"footprint\",\"id\":N,…} with the \
    target's processes, threads, RSS and /stats tasks; {\"order\":\"count\",\
    \"from_unix_ms\":…,\"to_unix_ms\":…} by {\"event\":\"counters\",…} with the kernel \
    counters of its process group over that span (docs/distributed.md).\n\n\
    The target runs until stdin reaches end of file (Ctrl-D, or the SSH connection that \
    started it closes) or SIGINT, SIGTERM or SIGHUP arrives; then it is stopped and reaped. \
    Exit status: 0 after stdin closed or SIGHUP, 130 after SIGINT or SIGTERM, 1 when the \
    target breaks the contract, 2 for bad flags, 3 when it does not build or start, or exits \
    by itself.\n\n\
    Examples:\n  \
    corobench serve go-nethttp --cpus 0-1\n  \
    ssh bench-server corobench serve rust-axum --param workers=4 --cpus 2-5\n  \
    corobench serve rust-axum --protocol h2 --tls-dir /etc/corobench/tls")]
pub struct ServeArgs {
    /// The target to serve (see `corobench targets`)
    #[arg(value_name = "TARGET")]
    pub target: String,

    /// A parameter of the target, repeatable: --param workers=4
    #[arg(long = "param", value_parser = values::parse_parameter, value_name = "NAME=VALUE")]
    pub params: Vec<(String, String)>,

    /// CPUs the target runs on, e.g. 0-1 or 2,3 [default: every CPU]
    #[arg(long, value_name = "LIST", value_parser = values::parse_cpus)]
    pub cpus: Option<CpuSet>,

    /// Listen on this port [default: a free one]
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,

    /// Address the target binds (LISTEN_ADDR), e.g. 0.0.0.0 so that
    /// generators on other hosts reach it [default: 127.0.0.1]; the target
    /// must honour LISTEN_ADDR (docs/distributed.md)
    #[arg(long, value_name = "IP")]
    pub listen: Option<std::net::IpAddr>,

    /// Time between two resource samples
    #[arg(long, default_value = "1s", value_parser = parse_interval, value_name = "DURATION")]
    pub sample_interval: Duration,

    /// Run the machine-speed probe on the target's CPUs before starting it
    /// and print its speed ({"event":"probe","mb_per_s":…})
    #[arg(long)]
    pub probe: bool,

    /// What the target serves (HTTP_PROTOCOL): http/1.1, tls, h2 or h2c; the
    /// target must declare it in its manifest's [protocols]
    #[arg(long, default_value = "http/1.1", value_name = "PROTOCOL")]
    pub protocol: corobench_model::Protocol,

    /// Read the certificates to serve over TLS (TLS_CERT, TLS_KEY, and the
    /// authority that signed them) from the first line of stdin, as
    /// {"ca":…,"cert":…,"key":…} with PEM text, before any order: how the
    /// coordinator of a run on hosts hands over its run's certificates.
    /// Needed by, and only by, --protocol tls or h2 (or --tls-dir)
    #[arg(long)]
    pub tls_stdin: bool,

    /// Read the certificates to serve over TLS from files in DIR: cert.pem
    /// (TLS_CERT), key.pem (TLS_KEY) and ca.pem (the authority that signed
    /// it), as the target Pod of `corobench k8s render` mounts its Secret.
    /// Needed by, and only by, --protocol tls or h2 (or --tls-stdin)
    #[arg(long, value_name = "DIR", conflicts_with = "tls_stdin")]
    pub tls_dir: Option<PathBuf>,

    /// Do not check the contract before announcing the target (when it was
    /// verified already, e.g. by `corobench verify` with the same build)
    #[arg(long)]
    pub no_verify: bool,

    #[command(flatten)]
    pub dir: TargetsDirArg,
}

/// Why serving ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// Stdin reached end of file: the coordinator is gone.
    StdinClosed,
    /// SIGHUP: the terminal or session that started us is gone.
    HangUp,
    /// Nobody reads stdout any more.
    StdoutClosed,
    /// SIGINT or SIGTERM.
    Signal,
    /// The target exited by itself.
    TargetExited,
}

impl End {
    fn reason(self) -> &'static str {
        match self {
            Self::StdinClosed => "stdin closed",
            Self::HangUp => "hang-up (SIGHUP)",
            Self::StdoutClosed => "stdout closed",
            Self::Signal => "interrupted (SIGINT or SIGTERM)",
            Self::TargetExited => "the target exited",
        }
    }
}

/// What ends serving early: the lifeline and the signals; and the orders
/// that come down the lifeline.
#[derive(Debug)]
struct Lifeline {
    stdin_closed: Arc<AtomicBool>,
    hang_up: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    orders: Receiver<Order>,
}

impl Lifeline {
    /// Installs the signal handlers and starts watching stdin.
    fn watch() -> anyhow::Result<Self> {
        let stop = signals::stop_flag()?;
        let hang_up = Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&hang_up))
            .context("cannot install the SIGHUP handler")?;
        let stdin_closed = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stdin_closed);
        let (sender, orders) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("lifeline".into())
            .spawn(move || {
                serve::read_orders(std::io::stdin().lock(), &sender, |line| {
                    progress(&format!("ignored a line on stdin that is no order: {line}"));
                });
                flag.store(true, Ordering::Relaxed);
            })
            .context("cannot start the thread that watches stdin")?;
        Ok(Self {
            stdin_closed,
            hang_up,
            stop,
            orders,
        })
    }

    /// Why serving must end now, if it must.
    fn cut(&self) -> Option<End> {
        if self.stop.load(Ordering::Relaxed) {
            Some(End::Signal)
        } else if self.hang_up.load(Ordering::Relaxed) {
            Some(End::HangUp)
        } else if self.stdin_closed.load(Ordering::Relaxed) {
            Some(End::StdinClosed)
        } else {
            None
        }
    }

    /// The exit status when serving must end before the target is
    /// announced, saying why: 130 after a signal, 0 when the lifeline was
    /// cut (nobody waits for the target any more), as after it was announced.
    fn early_exit(&self, during: &str) -> Option<Exit> {
        let end = self.cut()?;
        progress(&format!(
            "{} while {during}: nothing is served",
            end.reason()
        ));
        Some(match end {
            End::Signal => Exit::Interrupted,
            _ => Exit::Success,
        })
    }
}

/// Runs `corobench serve`.
///
/// # Errors
/// Bad flags or an unknown target (exit 2), a target that does not build,
/// start or stay up (exit 3), one that breaks the contract (exit 1).
pub fn run(args: &ServeArgs) -> anyhow::Result<Exit> {
    let workspace = Workspace::open("serve")?;
    // Before the lifeline reads stdin: its first line.
    let certificates = certificates(args, &workspace)?;
    let lifeline = Lifeline::watch()?;
    let targets = Targets::discover(args.dir.targets_dir.as_deref())?;
    let manifest = server_manifest(&targets, &args.target)?;
    let given = values::parameter_map(&args.params)?;
    let parameters = targets.parameters(&manifest.name, &given)?;
    let cpus = args.cpus.clone();
    // First, before a build that may take minutes: the coordinator checks
    // that it speaks this protocol.
    print_line(
        &mut std::io::stdout().lock(),
        &ServeEvent::Hello(Hello::ours()),
    );
    let built = serve::build(&workspace, manifest, progress)?;
    if let Some(exit) = lifeline.early_exit("building") {
        return Ok(exit);
    }
    if args.probe {
        let probe = serve::probe_line(cpus.as_ref());
        print_line(&mut std::io::stdout().lock(), &probe);
    }
    let placement = Placement {
        parameters,
        cpus,
        port: args.port,
        listen: args.listen,
        protocol: args.protocol,
        tls: certificates.as_ref().map(|c| c.files().clone()),
    };
    let mut target = serve::start(&workspace, &built, placement, progress).map_err(hints::serve)?;
    if let Some(exit) = lifeline.early_exit("starting the target") {
        return Ok(exit);
    }
    // A user's server has no contract to check (its workloads' expectations
    // are the coordinator's to check).
    if !args.no_verify && manifest.contract {
        serve::verify_running(&target, manifest, progress)?;
        if let Some(exit) = lifeline.early_exit("verifying the target") {
            return Ok(exit);
        }
    }
    serve::still_running(&mut target)?;
    let mut stdout = std::io::stdout().lock();
    let verified = !args.no_verify && manifest.contract;
    let cpus = args.cpus.as_ref().map(ToString::to_string);
    let ready = serve::ready_line(&target, &built, (args.listen, cpus), verified);
    let end = if print_line(&mut stdout, &ready) {
        let stats = manifest
            .contract
            .then(|| {
                let tls = certificates.as_ref().map(RunCertificates::files);
                serve::stats_reach(args.protocol, tls, target.addr())
            })
            .flatten();
        let mut answerer = Answerer::new(target.pgid(), stats);
        let streamed = serve::stream(
            &mut target,
            args.sample_interval,
            (&lifeline.orders, &mut answerer),
            || lifeline.cut(),
            |line| print_line(&mut stdout, line),
        )
        .map_err(|e| exit::target_failed(format!("cannot sample the target: {e}")))?;
        match streamed {
            Streamed::Cut(end) => end,
            Streamed::TargetExited => End::TargetExited,
            Streamed::OutputClosed => End::StdoutClosed,
        }
    } else {
        End::StdoutClosed
    };
    finish(target, end, &mut stdout)
}

/// The manifest of a server target that can run here.
fn server_manifest<'t>(targets: &'t Targets, name: &str) -> anyhow::Result<&'t Manifest> {
    // An unknown name fails here, with the names there are.
    targets.select(&[name.to_string()])?;
    let manifest = targets
        .get(name)
        .ok_or_else(|| exit::usage(format!("no target named {name:?}")))?;
    serve::servable(manifest)?;
    Ok(manifest)
}

/// `--sample-interval`: from 10 ms to an hour.
fn parse_interval(text: &str) -> Result<Duration, String> {
    let interval = values::parse_duration(text).map_err(|e| e.to_string())?;
    if interval < Duration::from_millis(10) || interval > Duration::from_secs(3600) {
        return Err(format!(
            "{text:?}: the sample interval must be from 10ms to 1h, e.g. 1s or 250ms"
        ));
    }
    Ok(interval)
}

/// With `--tls-stdin`, the certificates on the first line of stdin; with
/// `--tls-dir`, those in its files; written into the workspace (removed
/// with it, the folder given left as it is). A protocol over TLS without
/// them, or them without one, is refused.
fn certificates(
    args: &ServeArgs,
    workspace: &Workspace,
) -> anyhow::Result<Option<RunCertificates>> {
    let flag = match (args.tls_stdin, &args.tls_dir) {
        (true, _) => Some("--tls-stdin"),
        (false, Some(_)) => Some("--tls-dir"),
        (false, None) => None,
    };
    match (args.protocol.tls, flag) {
        (false, None) => return Ok(None),
        (true, None) => {
            return Err(exit::usage(format!(
                "--protocol {} runs over TLS and needs the certificates to serve: pass \
                 --tls-dir DIR (with cert.pem, key.pem and ca.pem), or --tls-stdin and write \
                 them on stdin's first line",
                args.protocol
            )));
        }
        (false, Some(flag)) => {
            return Err(exit::usage(format!(
                "{flag} is for a protocol over TLS, and --protocol is {}: use --protocol tls \
                 or h2, or leave {flag} out",
                args.protocol
            )));
        }
        (true, Some(_)) => {}
    }
    let text = match &args.tls_dir {
        Some(dir) => read_tls_dir(dir)?,
        None => serve::read_certificates(std::io::stdin().lock())
            .map_err(|e| exit::usage(format!("--tls-stdin: {e}")))?,
    };
    let dir = workspace.work_dir.join("tls");
    let written = RunCertificates::from_pem(&dir, &text.ca, &text.cert, &text.key)
        .map_err(|e| exit::target_failed(format!("cannot write the certificates: {e}")))?;
    Ok(Some(written))
}

/// `--tls-dir DIR`: the text of its `cert.pem`, `key.pem` and `ca.pem`.
fn read_tls_dir(dir: &Path) -> anyhow::Result<Certificates> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).map_err(|e| {
            exit::usage(format!(
                "--tls-dir {}: cannot read {}: {e}; the folder must hold {CERT_FILE}, \
                 {KEY_FILE} and {CA_FILE} (PEM)",
                dir.display(),
                path.display()
            ))
        })
    };
    Ok(Certificates {
        cert: read(CERT_FILE)?,
        key: read(KEY_FILE)?,
        ca: read(CA_FILE)?,
    })
}

/// Writes one JSON line; `false` when stdout is closed.
fn print_line(stdout: &mut impl Write, line: &ServeEvent) -> bool {
    writeln!(stdout, "{}", line.line())
        .and_then(|()| stdout.flush())
        .is_ok()
}

/// Stops and reaps the target, says why on stdout (if anyone still reads
/// it), and picks the exit status.
fn finish(mut target: RunningTarget, end: End, stdout: &mut impl Write) -> anyhow::Result<Exit> {
    let exited = target.exit_status();
    let stderr_tail = target.stderr_tail(STDERR_TAIL_LINES);
    let name = target.name().to_string();
    let signal = target.stop_signal();
    let stop = target.stop();
    progress(&format!("{name} stopped: {}", end.reason()));
    let line = serve::stopped_line(end.reason(), exited, signal, stop.as_ref().ok());
    let _ = print_line(stdout, &line);
    match end {
        End::TargetExited => Err(exit::target_failed(format!(
            "{name} exited by itself ({}); last lines of its stderr:\n{stderr_tail}",
            exited.map_or_else(|| "status unknown".into(), |s| s.to_string())
        ))),
        End::Signal => Ok(Exit::Interrupted),
        End::StdinClosed | End::HangUp | End::StdoutClosed => {
            stop.map_err(|e| anyhow::anyhow!("stopping {name} failed: {e}"))?;
            Ok(Exit::Success)
        }
    }
}

fn progress(message: &str) {
    eprintln!("serve: {message}");
}
