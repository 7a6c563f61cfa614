//! The spec `corobench bench`'s flags stand for: the flags are parsed
//! here (servers as `NAME=COMMAND`, headers as `NAME: VALUE`) into a
//! `corobench_spec::QuickForm`, which writes the spec as a user would.

use corobench_spec::QuickForm;

use super::BenchArgs;
use crate::exit;

/// The spec the flags stand for.
///
/// # Errors
/// A server not written NAME=COMMAND, the same name twice, or a `--pid` or
/// `--process` that names no server already running.
pub fn spec_text(args: &BenchArgs) -> anyhow::Result<String> {
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .map_err(|e| exit::usage(format!("--cwd {}: {e}", cwd.display())))?;
    let quick = QuickForm {
        servers: servers(&args.servers)?,
        pids: args.pids.clone(),
        processes: args.processes.clone(),
        path: args.path.clone(),
        method: args.method.clone(),
        headers: headers(&args.headers)?,
        body: args.body.clone(),
        expect_status: args.expect_status,
        expect_body: args.expect_body.clone(),
        ready: args.ready.clone(),
        ready_timeout: args.ready_timeout,
        cwd,
        server_cpus: args.server_cpus.clone(),
        generator_cpus: args.generator_cpus.clone(),
        connections: args.connections,
        rate_per_s: args.rate,
        protocol: (&args.protocol).into(),
        trials: args.trials,
        duration: args.duration,
        warmup: args.warmup,
        idle: args.idle,
    };
    let spec = quick.spec_text().map_err(|e| super::protocol::told(&e))?;
    Ok(format!("# Written by corobench bench.\n{spec}"))
}

/// `--header NAME: VALUE` pairs.
fn headers(given: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    given
        .iter()
        .map(|header| {
            crate::values::parse_header(header).map_err(|e| exit::usage(format!("--header {e}")))
        })
        .collect()
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
