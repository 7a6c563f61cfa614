//! `[hosts]`: the trial's server and its generators run on other machines,
//! reached over SSH. Only the syntax is checked here; whether the hosts
//! answer, and have the CPUs named, is found out when the run starts.

use toml::de::DeValue;

use crate::document::{self, Field, Table, Value};
use crate::error::{Locator, SpecError};
use crate::keys;
use crate::plan::{Body, HostAddress, Hosts, PlannedScenario};
use crate::values::parse_cpu_list;

/// The most generator hosts one trial fans out to: the coordinator holds
/// one SSH session per host, and past this the fan-out, not the server,
/// is what a run would measure.
pub const MAX_GENERATOR_HOSTS: usize = 64;

/// CPU numbers are checked on the host itself, which this machine cannot see.
const ANY_CPU: usize = 1 << 16;

/// Reads `[hosts]`, if the spec has one.
pub(super) fn read(
    field: Option<&Field<'_>>,
    at: &Locator<'_>,
) -> Result<Option<Hosts>, SpecError> {
    let Some(field) = field else { return Ok(None) };
    let table = Table::read(field.value, "hosts", keys::HOSTS, at)?;
    let server_field = table.require("server", "server = \"ssh://bench@10.0.0.2\"", at)?;
    let server = address(server_field.value, "hosts.server", at)?;
    let generators = generators(&table, at)?;
    let generator_cpus = generator_cpus(&table, generators.len(), at)?;
    let optional_text = |name: &str, example: &str| -> Result<Option<String>, SpecError> {
        table
            .get(name)
            .map(|f| non_empty(f, example, at))
            .transpose()
    };
    let server_cpus = table
        .get("server_cpus")
        .map(|f| cpu_list(f.value, &f.path, at))
        .transpose()?;
    Ok(Some(Hosts {
        server_address: optional_text("server_address", "\"10.0.0.2\"")?
            .unwrap_or_else(|| server.host.clone()),
        listen: optional_text("listen", "\"0.0.0.0\"")?.unwrap_or_else(|| "0.0.0.0".into()),
        server,
        generators,
        server_cpus,
        generator_cpus,
        corobench: optional_text("corobench", "\"/usr/local/bin/corobench\"")?,
        install_dir: optional_text("install_dir", "\".cache/corobench\"")?
            .unwrap_or_else(|| ".cache/corobench".into()),
        targets_dir: optional_text("targets_dir", "\"/srv/corobench/targets\"")?,
        ssh_config: optional_text("ssh_config", "\"~/.ssh/bench_config\"")?,
    }))
}

/// `generators = ["ssh://…", …]`: at least one, each host once.
fn generators(table: &Table<'_>, at: &Locator<'_>) -> Result<Vec<HostAddress>, SpecError> {
    let field = table.require("generators", "generators = [\"ssh://bench@10.0.0.3\"]", at)?;
    let items = document::list(field.value, &field.path, "a list of ssh:// addresses", at)?;
    if items.is_empty() || items.len() > MAX_GENERATOR_HOSTS {
        let message = format!(
            "give from 1 to {MAX_GENERATOR_HOSTS} generator hosts, e.g. \
             generators = [\"ssh://bench@10.0.0.3\"]"
        );
        return Err(at.at(field.value.span(), &field.path, message));
    }
    let mut hosts: Vec<HostAddress> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let key = format!("{}[{i}]", field.path);
        let host = address(item, &key, at)?;
        if hosts.iter().any(|h| h.text == host.text) {
            let message = format!(
                "{} is listed twice: each generator host runs one generator, so list it once \
                 (more load from one host comes from more connections or generator_threads)",
                host.text
            );
            return Err(at.at(item.span(), key, message));
        }
        hosts.push(host);
    }
    Ok(hosts)
}

/// `generator_cpus = "1"` (every generator host) or one list per host.
fn generator_cpus(
    table: &Table<'_>,
    hosts: usize,
    at: &Locator<'_>,
) -> Result<Vec<Option<String>>, SpecError> {
    let Some(field) = table.get("generator_cpus") else {
        return Ok(vec![None; hosts]);
    };
    let DeValue::Array(items) = field.value.get_ref() else {
        let list = cpu_list(field.value, &field.path, at)?;
        return Ok(vec![Some(list); hosts]);
    };
    if items.len() != hosts {
        let message = format!(
            "{} CPU lists for {hosts} generator hosts: give one list per host, in the order of \
             `generators`, or one text for all (generator_cpus = \"1\")",
            items.len()
        );
        return Err(at.at(field.value.span(), &field.path, message));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| cpu_list(item, &format!("{}[{i}]", field.path), at).map(Some))
        .collect()
}

fn cpu_list(value: &Value<'_>, key: &str, at: &Locator<'_>) -> Result<String, SpecError> {
    let text = document::text(value, key, "\"0-1\"", at)?;
    parse_cpu_list(text, ANY_CPU).map_err(|e| at.at(value.span(), key, e))?;
    Ok(text.trim().to_string())
}

fn non_empty(field: &Field<'_>, example: &str, at: &Locator<'_>) -> Result<String, SpecError> {
    let text = document::text(field.value, &field.path, example, at)?;
    if text.trim().is_empty() {
        let message = format!(
            "{} is empty; give e.g. {example} or leave the key out",
            field.path
        );
        return Err(at.at(field.value.span(), &field.path, message));
    }
    Ok(text.to_string())
}

/// `ssh://[user@]host[:port]`.
fn address(value: &Value<'_>, key: &str, at: &Locator<'_>) -> Result<HostAddress, SpecError> {
    let text = document::text(value, key, "\"ssh://bench@10.0.0.2\"", at)?;
    parse_address(text).map_err(|why| {
        at.at(
            value.span(),
            key,
            format!("{text:?} is not a host address: {why}; write ssh://[user@]host[:port], e.g. ssh://bench@10.0.0.2:2222"),
        )
    })
}

/// Why a host address is not `ssh://[user@]host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error("only ssh:// hosts are supported")]
    NotSsh,
    #[error("it has a path, query or space after the host")]
    AfterHost,
    #[error("the user before @ is empty")]
    EmptyUser,
    #[error("the host is empty or starts with -")]
    BadHost,
    #[error("an IPv6 address lacks its closing ]")]
    UnclosedIpv6,
    #[error("{0:?} is not a port (1 to 65535)")]
    BadPort(String),
}

/// Parses `ssh://[user@]host[:port]`.
///
/// # Errors
/// Another scheme, an empty host, a path, a bad port.
pub fn parse_address(text: &str) -> Result<HostAddress, AddressError> {
    let rest = text.strip_prefix("ssh://").ok_or(AddressError::NotSsh)?;
    if rest.contains(['/', '?', '#', ' ']) {
        return Err(AddressError::AfterHost);
    }
    let (user, host_port) = match rest.rsplit_once('@') {
        Some(("", _)) => return Err(AddressError::EmptyUser),
        Some((user, hp)) => (Some(user.to_string()), hp),
        None => (None, rest),
    };
    let (host, port) = split_port(host_port)?;
    if host.is_empty() || host.starts_with('-') {
        return Err(AddressError::BadHost);
    }
    Ok(HostAddress {
        text: text.to_string(),
        user,
        host: host.to_string(),
        port,
    })
}

/// `host`, `host:22`, `[::1]`, `[::1]:22`.
fn split_port(text: &str) -> Result<(&str, Option<u16>), AddressError> {
    let (host, port) = if let Some(inner) = text.strip_prefix('[') {
        let (host, after) = inner.split_once(']').ok_or(AddressError::UnclosedIpv6)?;
        (host, after.strip_prefix(':'))
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let port = port
        .map(|p| match p.parse::<u16>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(AddressError::BadPort(p.to_owned())),
        })
        .transpose()?;
    Ok((host, port))
}

/// Every generator host needs a connection of its own (a program runs on
/// the first generator host, whatever its scenario's connections).
pub(super) fn refuse_unsupported(
    (hosts_field, hosts): (Option<&Field<'_>>, Option<&Hosts>),
    scenarios: &[PlannedScenario],
    at: &Locator<'_>,
) -> Result<(), SpecError> {
    let (Some(field), Some(hosts)) = (hosts_field, hosts) else {
        return Ok(());
    };
    let span = field.key_span.clone();
    let count = hosts.generators.len();
    if let Some(thin) = scenarios
        .iter()
        .find(|s| s.program.is_none() && (s.schedule.connections as usize) < count)
    {
        let message = format!(
            "{} has {} connections for {count} generator hosts: each host needs at least one; \
             raise connections or list fewer generators",
            thin.key, thin.schedule.connections
        );
        return Err(at.at(span, "hosts.generators", message));
    }
    refuse_binary_bodies(scenarios, span, at)
}

/// Generator hosts get the body on their command line, as text: a body
/// file that is not text (not UTF-8, or with a NUL byte) would fail every
/// trial, so it is refused before the first.
fn refuse_binary_bodies(
    scenarios: &[PlannedScenario],
    span: std::ops::Range<usize>,
    at: &Locator<'_>,
) -> Result<(), SpecError> {
    for scenario in scenarios {
        let Body::File(path) = &scenario.workload.body else {
            continue;
        };
        let text = std::fs::read(path).map(String::from_utf8);
        if matches!(&text, Ok(Ok(text)) if !text.contains('\0')) {
            continue;
        }
        let message = format!(
            "workload {} has a binary body_file ({}), and generator hosts get the body as \
             text on their command line: use a text body with [hosts], or run without [hosts]",
            scenario.workload.name,
            path.display()
        );
        return Err(at.at(span, "hosts", message));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        let a = parse_address("ssh://bench@10.0.0.2:2222").unwrap();
        assert_eq!(
            (a.user.as_deref(), a.host.as_str(), a.port),
            (Some("bench"), "10.0.0.2", Some(2222))
        );
        let b = parse_address("ssh://[fd00::1]").unwrap();
        assert_eq!((b.user, b.host.as_str(), b.port), (None, "fd00::1", None));
        for bad in [
            "http://x",
            "ssh://",
            "ssh://@x",
            "ssh://x:0",
            "ssh://x:99999",
            "ssh://x/path",
            "ssh://-oProxyCommand=x",
        ] {
            assert!(parse_address(bad).is_err(), "{bad}");
        }
    }
}
