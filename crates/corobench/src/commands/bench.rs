//! `corobench bench`: the quick form for one's own servers, hyperfine-style.
//! Two or more servers given as commands and one request become a spec
//! (`[servers.NAME]` and one workload), run by `corobench run` itself: the
//! same fresh starts, pinning, interleaved trials, storage and statistics.
//! `--spec-out FILE` writes that spec instead, so a quick experiment grows
//! into a suite.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::run::RunArgs;
use super::shared::{DbArg, TargetsDirArg};
use crate::exit::{self, Exit};

/// Flags of `corobench bench`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench bench --server 'v1=./api-v1 --port {port}' --server 'v2=./api-v2 --port {port}' --path /api/orders\n  \
    corobench bench --server 'one=./api --port {port}' --server 'four=./api --port {port} --threads 4' --path /health -c 64 --trials 8\n  \
    corobench bench --server 'a=./a {port}' --server 'b=./b {port}' --path / --spec-out mine.toml")]
pub struct BenchArgs {
    /// A server, as NAME=COMMAND: the command starts it, `{port}` is the
    /// port it must listen on (also in $PORT); or NAME=http://HOST:PORT for
    /// one already running there (not started fresh per trial); give it
    /// twice or more
    #[arg(long = "server", value_name = "NAME=COMMAND", required = true)]
    pub servers: Vec<String>,

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

    /// The servers' working directory [default: this one]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Connections
    #[arg(short = 'c', long, default_value_t = 16)]
    pub connections: u32,

    /// An open-loop rate in requests per second instead of a closed loop
    #[arg(short = 'R', long, value_name = "RATE")]
    pub rate: Option<f64>,

    /// Trials per server
    #[arg(long, default_value_t = 6)]
    pub trials: u32,

    /// Measured time of each trial
    #[arg(short = 'd', long, default_value = "5s", value_parser = corobench_spec::parse_duration)]
    pub duration: Duration,

    /// Warm-up before each trial's measured time
    #[arg(long, default_value = "1s", value_parser = corobench_spec::parse_duration)]
    pub warmup: Duration,

    /// Write the equivalent spec to FILE and stop, instead of running it
    #[arg(long, value_name = "FILE")]
    pub spec_out: Option<PathBuf>,

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
    let spec = spec_text(args)?;
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
    let folder = corobench_engine::scratch::folder("bench");
    std::fs::create_dir_all(&folder)?;
    let path = folder.join("bench.toml");
    std::fs::write(&path, &spec)?;
    let run = RunArgs {
        spec: Some(path),
        resume: None,
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
    };
    let result = super::run::run(&run);
    let _ = std::fs::remove_dir_all(&folder);
    result
}

/// The spec the flags stand for.
///
/// # Errors
/// A server not written NAME=COMMAND, or the same name twice.
pub fn spec_text(args: &BenchArgs) -> anyhow::Result<String> {
    let servers = servers(&args.servers)?;
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .map_err(|e| exit::usage(format!("--cwd {}: {e}", cwd.display())))?;
    let names: Vec<String> = servers.iter().map(|(name, _)| toml_string(name)).collect();
    let mut spec = format!(
        "# Written by corobench bench.\nname = \"bench\"\ntargets = [{}]\n\n[run]\ntrials = {}\n\
         duration = \"{}\"\nwarmup = \"{}\"\n\n[schedule]\nconnections = {}\n",
        names.join(", "),
        args.trials,
        humantime::format_duration(args.duration),
        humantime::format_duration(args.warmup),
        args.connections,
    );
    if let Some(rate) = args.rate {
        writeln!(spec, "rates = [{rate}]")?;
    }
    spec.push_str(&workload(args)?);
    for (name, command) in &servers {
        if command.starts_with("http://") {
            let url = toml_string(command);
            write!(spec, "\n[servers.{}]\nurl = {url}\n", table_key(name))?;
            continue;
        }
        write!(
            spec,
            "\n[servers.{}]\ncommand = {}\ncwd = {}\nready = {}\n",
            table_key(name),
            toml_string(command),
            toml_string(&cwd.display().to_string()),
            toml_string(&args.ready),
        )?;
    }
    Ok(spec)
}

fn workload(args: &BenchArgs) -> anyhow::Result<String> {
    let mut text = format!(
        "\n[[workloads]]\nname = \"request\"\npath = {}\nmethod = {}\n",
        toml_string(&args.path),
        toml_string(&args.method)
    );
    if !args.headers.is_empty() {
        let mut pairs = Vec::new();
        for header in &args.headers {
            let (name, value) = header
                .split_once(':')
                .ok_or_else(|| exit::usage(format!("--header {header:?}: write NAME: VALUE")))?;
            pairs.push(format!(
                "{} = {}",
                toml_string(name.trim()),
                toml_string(value.trim())
            ));
        }
        writeln!(text, "headers = {{ {} }}", pairs.join(", "))?;
    }
    if let Some(body) = &args.body {
        writeln!(text, "body = {}", toml_string(body))?;
    }
    if let Some(status) = args.expect_status {
        writeln!(text, "expect_status = {status}")?;
    }
    if let Some(piece) = &args.expect_body {
        writeln!(text, "expect_body = {}", toml_string(piece))?;
    }
    Ok(text)
}

/// `NAME=COMMAND` pairs, each name once.
fn servers(given: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    let mut servers: Vec<(String, String)> = Vec::new();
    for text in given {
        let Some((name, command)) = text.split_once('=') else {
            return Err(exit::usage(format!(
                "--server {text:?}: write NAME=COMMAND, e.g. --server 'v1=./api --port {{port}}'"
            )));
        };
        let (name, command) = (name.trim(), command.trim());
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if !valid || command.is_empty() {
            return Err(exit::usage(format!(
                "--server {text:?}: the name takes letters, digits, '-', '_' and '.', and the \
                 command must not be empty"
            )));
        }
        if let Some((_, first)) = servers.iter().find(|(known, _)| known == name) {
            return Err(exit::usage(format!(
                "--server {name} is given twice ({first:?} and {command:?}); name them apart"
            )));
        }
        servers.push((name.to_owned(), command.to_owned()));
    }
    Ok(servers)
}

/// A server's name as a table key: bare unless a dot would split it.
fn table_key(name: &str) -> String {
    if name.contains('.') {
        toml_string(name)
    } else {
        name.to_owned()
    }
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}
