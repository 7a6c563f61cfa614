//! The spec `corobench bench`'s flags stand for: `[servers.NAME]`, one
//! workload and the run's settings, written as a user would write it.

use std::fmt::Write as _;

use super::BenchArgs;
use crate::exit;

/// The spec the flags stand for.
///
/// # Errors
/// A server not written NAME=COMMAND, the same name twice, or a `--pid` or
/// `--process` that names no server already running.
pub fn spec_text(args: &BenchArgs) -> anyhow::Result<String> {
    let servers = servers(&args.servers)?;
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .map_err(|e| exit::usage(format!("--cwd {}: {e}", cwd.display())))?;
    let running: Vec<&str> = servers
        .iter()
        .filter(|(_, command)| is_address(command))
        .map(|(name, _)| name.as_str())
        .collect();
    let at_scheme = |scheme: &str| -> Vec<&str> {
        servers
            .iter()
            .filter(|(_, command)| command.starts_with(scheme))
            .map(|(name, _)| name.as_str())
            .collect()
    };
    let protocol_keys = args
        .protocol
        .schedule_keys(&at_scheme("https://"), &at_scheme("http://"))?;
    let sampled = Sampled {
        pids: assigned("--pid", &args.pids, &running)?,
        processes: assigned("--process", &args.processes, &running)?,
    };
    let names: Vec<String> = servers.iter().map(|(name, _)| toml_string(name)).collect();
    let mut spec = format!(
        "# Written by corobench bench.\nname = \"bench\"\ntargets = [{}]\n",
        names.join(", ")
    );
    spec.push_str(&run_table(args));
    write!(spec, "\n[schedule]\nconnections = {}\n", args.connections)?;
    if let Some(rate) = args.rate {
        writeln!(spec, "rates = [{rate}]")?;
    }
    spec.push_str(&protocol_keys);
    spec.push_str(&workload(args)?);
    for (name, command) in &servers {
        write!(spec, "\n[servers.{}]\n", table_key(name))?;
        if is_address(command) {
            writeln!(spec, "url = {}", toml_string(command))?;
            spec.push_str(&sampled.keys(name));
            let table = format!("servers.{}", table_key(name));
            spec.push_str(&args.protocol.running_keys(&table, command));
            continue;
        }
        write!(
            spec,
            "command = {}\ncwd = {}\nready = {}\n",
            toml_string(command),
            toml_string(&cwd.display().to_string()),
            toml_string(&args.ready),
        )?;
        if let Some(timeout) = args.ready_timeout {
            // Whole seconds, at least one.
            let seconds = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
            writeln!(spec, "ready_timeout_s = {}", seconds.max(1))?;
        }
        let table = format!("servers.{}", table_key(name));
        spec.push_str(&args.protocol.started_keys(&table));
    }
    Ok(spec)
}

/// `[run]`: trials, window, warm-up and idle, and where the servers and
/// the generator run when the flags say.
fn run_table(args: &BenchArgs) -> String {
    let duration = |d: Option<std::time::Duration>, default| {
        humantime::format_duration(d.unwrap_or(default)).to_string()
    };
    let mut table = format!(
        "\n[run]\ntrials = {}\nduration = \"{}\"\nwarmup = \"{}\"\n",
        args.trials,
        duration(args.duration, corobench_spec::DEFAULT_DURATION),
        duration(args.warmup, corobench_spec::DEFAULT_WARMUP),
    );
    let optional = [
        ("idle", args.idle.map(|d| duration(Some(d), d))),
        ("server_cpus", args.server_cpus.clone()),
        ("generator_cpus", args.generator_cpus.clone()),
    ];
    for (key, value) in optional {
        if let Some(value) = value {
            let _ = writeln!(table, "{key} = {}", toml_string(&value));
        }
    }
    table
}

/// Which process each server already running is sampled by.
struct Sampled {
    pids: Vec<(String, String)>,
    processes: Vec<(String, String)>,
}

impl Sampled {
    /// `pid = …` and `process = …` of server `name`, as given (the spec
    /// refuses both at once, saying so).
    fn keys(&self, name: &str) -> String {
        let find = |list: &[(String, String)]| {
            list.iter()
                .find(|(server, _)| server == name)
                .map(|(_, value)| value.clone())
        };
        let mut keys = String::new();
        if let Some(pid) = find(&self.pids) {
            keys.push_str(&format!("pid = {pid}\n"));
        }
        if let Some(process) = find(&self.processes) {
            keys.push_str(&format!("process = {}\n", toml_string(&process)));
        }
        keys
    }
}

/// `--pid`/`--process` values as (server, value): `NAME=VALUE`, or a bare
/// value when exactly one server is already running.
fn assigned(
    flag: &str,
    given: &[String],
    running: &[&str],
) -> anyhow::Result<Vec<(String, String)>> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for text in given {
        let (name, value) = match text.split_once('=') {
            Some((name, value)) => (name.trim().to_owned(), value.trim().to_owned()),
            None if running.len() == 1 => (running[0].to_owned(), text.trim().to_owned()),
            None => {
                return Err(exit::usage(format!(
                    "{flag} {text}: say which server it is, {flag} NAME={text}: {} given as \
                     NAME=http://HOST:PORT",
                    if running.is_empty() {
                        "it is for a server already running, and none is".to_owned()
                    } else {
                        format!("the servers already running are {}", running.join(", "))
                    }
                )));
            }
        };
        if !running.contains(&name.as_str()) {
            return Err(exit::usage(format!(
                "{flag} {text}: {name} is not a server given as NAME=http://HOST:PORT; corobench \
                 starts the others itself and samples what it starts"
            )));
        }
        if flag == "--pid" && !value.parse::<i32>().is_ok_and(|pid| pid > 0) {
            return Err(exit::usage(format!(
                "{flag} {text}: {value:?} is not a process id, a positive whole number"
            )));
        }
        pairs.push((name, value));
    }
    Ok(pairs)
}

fn is_address(command: &str) -> bool {
    command.starts_with("http://") || command.starts_with("https://")
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
        if !corobench_target::is_valid_name(name) {
            return Err(exit::usage(format!(
                "--server {text:?}: {name:?} is no server name: {}",
                corobench_target::NAME_RULE
            )));
        }
        if command.is_empty() {
            return Err(exit::usage(format!(
                "--server {text:?}: the command is empty; write NAME=COMMAND"
            )));
        }
        let command = address_or_command(text, command)?;
        if let Some((_, first)) = servers.iter().find(|(known, _)| known == name) {
            return Err(exit::usage(format!(
                "--server {name} is given twice ({first:?} and {command:?}); name them apart"
            )));
        }
        servers.push((name.to_owned(), command));
    }
    Ok(servers)
}

/// A server's `SCHEME://…`: `http` (in any case) is a server already
/// running, written `http://…` or `https://…`; another scheme is refused rather than run
/// as a command. Anything else is a command.
fn address_or_command(text: &str, command: &str) -> anyhow::Result<String> {
    let Some((scheme, rest)) = command.split_once("://") else {
        return Ok(command.to_owned());
    };
    let is_scheme = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !is_scheme {
        return Ok(command.to_owned());
    }
    for known in ["http", "https"] {
        if scheme.eq_ignore_ascii_case(known) {
            return Ok(format!("{known}://{rest}"));
        }
    }
    Err(exit::usage(format!(
        "--server {text:?}: {scheme}:// is not measured; corobench loads servers over http:// \
         and https://: give NAME=http://HOST:PORT (or https://), or the command that starts \
         the server"
    )))
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
pub(super) fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}
