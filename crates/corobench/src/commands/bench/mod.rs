//! `corobench bench`: the quick form for one's own servers, hyperfine-style.
//! Servers given as commands (or addresses) and one request become a spec
//! (`[servers.NAME]` and one workload), run by `corobench run` itself: the
//! same fresh starts, pinning, interleaved trials, storage and statistics.
//! `--spec-out FILE` writes that spec instead, so a quick experiment grows
//! into a suite.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::run::RunArgs;
use super::shared::{DbArg, TargetsDirArg};
use crate::exit::{self, Exit};

mod flags;
mod protocol;
mod spec;

pub use protocol::ProtocolFlags;

/// Flags of `corobench bench`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench bench --server 'v1=./api-v1 --port {port}' --server 'v2=./api-v2 --port {port}' --path /api/orders\n  \
    corobench bench --server 'one=./api --port {port}' --server 'four=./api --port {port} --threads 4' --path /health -c 64 --trials 8\n  \
    corobench bench --server 'a=./a {port}' --server 'b=./b {port}' --path / --spec-out mine.toml\n  \
    corobench bench --tls --server 'v1=./api --port {port} --cert {tls_cert} --key {tls_key}' --path /health\n  \
    corobench bench --h2c -m 10 -c 10 --server 'go=./api --port {port}' --path /json\n  \
    corobench bench --server live=https://127.0.0.1:8443 --ca ca.pem --path /health")]
pub struct BenchArgs {
    /// A server, as NAME=COMMAND: the command starts it, `{port}` is the
    /// port it must listen on (also in $PORT); or NAME=http://HOST:PORT for
    /// one already running there (not started fresh per trial); once to
    /// measure one server alone, twice or more to compare them
    #[arg(long = "server", value_name = "NAME=COMMAND", required = true)]
    pub servers: Vec<String>,

    /// The process whose group is sampled for a server already running
    /// (NAME=http://…), by id: [NAME=]PID, the name needed only with
    /// several such servers
    #[arg(long = "pid", value_name = "[NAME=]PID")]
    pub pids: Vec<String>,

    /// As --pid, by the process's name: [NAME=]PROCESS
    #[arg(long = "process", value_name = "[NAME=]PROCESS")]
    pub processes: Vec<String>,

    /// The request's path and query
    #[arg(long, value_name = "PATH")]
    pub path: String,

    /// The request's method
    #[arg(long, default_value = "GET")]
    pub method: String,

    /// A request header, NAME: VALUE (repeatable)
    #[arg(long = "header", short = 'H', value_name = "HEADER")]
    pub headers: Vec<String>,

    /// The request's body
    #[arg(long)]
    pub body: Option<String>,

    /// The status a correct answer has (checked on one answer before the
    /// first trial, and by class on every answer)
    #[arg(long, value_name = "CODE")]
    pub expect_status: Option<u16>,

    /// A piece of text a correct answer's body holds
    #[arg(long, value_name = "TEXT")]
    pub expect_body: Option<String>,

    /// When a server is ready: a path that answers 2xx, or `port` (the port
    /// accepts a connection)
    #[arg(long, default_value = "port")]
    pub ready: String,

    /// How long a server may take to get ready before its trial fails
    /// [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = corobench_spec::parse_duration)]
    pub ready_timeout: Option<Duration>,

    /// The servers' working directory [default: this one]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// CPUs the servers are pinned to, e.g. 0 or 0-3 [default: half of the
    /// CPUs, the first]
    #[arg(long, value_name = "LIST")]
    pub server_cpus: Option<String>,

    /// CPUs the load generator is pinned to [default: the other half]
    #[arg(long, value_name = "LIST")]
    pub generator_cpus: Option<String>,

    /// Connections
    #[arg(short = 'c', long, default_value_t = corobench_spec::DEFAULT_CONNECTIONS)]
    pub connections: u32,

    /// An open-loop rate in requests per second instead of a closed loop
    /// (20000 or 20k)
    #[arg(short = 'R', long, value_name = "RATE", value_parser = crate::values::parse_rate)]
    pub rate: Option<f64>,

    #[command(flatten)]
    pub protocol: ProtocolFlags,

    /// Trials per server
    #[arg(long, default_value_t = corobench_spec::DEFAULT_TRIALS)]
    pub trials: u32,

    /// Measured time of each trial [default: 5s]
    #[arg(short = 'd', long, value_parser = corobench_spec::parse_duration)]
    pub duration: Option<Duration>,

    /// Warm-up before each trial's measured time [default: 1s]
    #[arg(long, value_parser = corobench_spec::parse_duration)]
    pub warmup: Option<Duration>,

    /// Quiet time after each trial's load before the leak check [default: 1s]
    #[arg(long, value_parser = corobench_spec::parse_duration)]
    pub idle: Option<Duration>,

    /// Write the equivalent spec to FILE and stop, instead of running it
    #[arg(long, value_name = "FILE")]
    pub spec_out: Option<PathBuf>,

    /// Plain progress lines instead of the live view (the view shows only
    /// when stdout and stderr are terminals)
    #[arg(long)]
    pub no_tui: bool,

    #[command(flatten)]
    pub db: DbArg,

    #[command(flatten)]
    pub dir: TargetsDirArg,
}

/// Runs `corobench bench`.
///
/// # Errors
/// A server not written NAME=COMMAND, the same name twice, an unusable
/// folder; then as `corobench run`.
pub fn run(args: &BenchArgs) -> anyhow::Result<Exit> {
    let spec = spec::spec_text(args)?;
    // What `run` would refuse is refused now, naming the flag, before a
    // spec is written or anything runs.
    flags::check(&spec, args)?;
    if let Some(out) = &args.spec_out {
        std::fs::write(out, &spec)
            .map_err(|e| exit::usage(format!("--spec-out {}: {e}", out.display())))?;
        eprintln!(
            "wrote {}; run it with: corobench run {}",
            out.display(),
            out.display()
        );
        return Ok(Exit::Success);
    }
    if args.servers.len() == 1 {
        eprintln!(
            "bench: one server, measured alone: there is nothing to compare it with (give \
             --server twice or more to compare)"
        );
    }
    let folder = corobench_engine::scratch::folder("bench");
    std::fs::create_dir_all(&folder)?;
    let path = folder.join("bench.toml");
    std::fs::write(&path, &spec)?;
    let run = RunArgs {
        spec: Some(path.clone()),
        resume: None,
        new_run_if_changed: false,
        db: args.db.clone(),
        dir: args.dir.clone(),
        trials: None,
        until_ci: None,
        budget: None,
        max_trials: None,
        seed: None,
        baseline: None,
        profile: false,
        no_probe: false,
        no_tui: args.no_tui,
    };
    let result = super::run::run(&run).map_err(|error| flags::retell(error, &path, &spec));
    let _ = std::fs::remove_dir_all(&folder);
    result
}
