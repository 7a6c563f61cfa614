//! The hosts of a run with `[hosts]`, made ready once before its trials:
//! each describes itself (CPU, kernel, corobench version), gets this
//! corobench binary copied over when it lacks the same version, and the
//! run is refused when versions differ, since the report formats and the
//! merge would not be those of one program.

use std::time::Duration;

use corobench_model::HostProvenance;
use corobench_spec::{HostAddress, Hosts};

use super::clock;
use crate::error::EngineError;
use crate::events::RunObserver;
use crate::transport::{self, Transport};

/// A probe or a mkdir: a connection and a few reads.
const PROBE_LIMIT: Duration = Duration::from_secs(30);
/// Copying the binary: tens of megabytes over a LAN, with margin.
const COPY_LIMIT: Duration = Duration::from_secs(300);

/// The hosts, ready: where corobench is on each and what each is.
#[derive(Debug)]
pub struct ReadyHosts {
    pub hosts: Hosts,
    /// How each host is reached (SSH, kubectl exec, this machine).
    pub transport: Box<dyn Transport>,
    /// corobench's path on the server host, then on each generator host.
    pub server_binary: String,
    pub generator_binaries: Vec<String>,
    /// The server host first, then every generator host.
    pub provenance: Vec<HostProvenance>,
}

/// What `corobench --version` prints here; every host must print the same.
#[must_use]
pub fn local_version() -> String {
    format!("corobench {}", env!("CARGO_PKG_VERSION"))
}

/// Probes every host, copies corobench where needed, checks the versions.
///
/// # Errors
/// A host that cannot be reached or described, a failed copy, a different
/// corobench version on a host (exit 2, with the host and how to fix it).
pub fn connect(
    hosts: &Hosts,
    transport: Box<dyn Transport>,
    observer: &dyn RunObserver,
) -> Result<ReadyHosts, EngineError> {
    let mut provenance = Vec::new();
    let server = ready(transport.as_ref(), hosts, &hosts.server, observer)?;
    provenance.push(described(
        server.clone(),
        "server",
        hosts.server_cpus.clone(),
    ));
    let mut generator_binaries = Vec::new();
    for (host, cpus) in hosts.generators.iter().zip(&hosts.generator_cpus) {
        let found = ready(transport.as_ref(), hosts, host, observer)?;
        generator_binaries.push(found.corobench_path.clone());
        provenance.push(described(found, "generator", cpus.clone()));
    }
    Ok(ReadyHosts {
        hosts: hosts.clone(),
        transport,
        server_binary: provenance[0].corobench_path.clone(),
        generator_binaries,
        provenance,
    })
}

/// Measures every host's clock against this one's, records it with the
/// host, and refuses the run when one is off by more than a share of the
/// shortest window; a clock that cannot be read is said and left unknown.
///
/// # Errors
/// A host whose clock is too far off, with the figure.
pub fn check_clocks(
    ready: &mut ReadyHosts,
    window: Duration,
    observer: &dyn RunObserver,
) -> Result<(), EngineError> {
    let addresses: Vec<HostAddress> = std::iter::once(ready.hosts.server.clone())
        .chain(ready.hosts.generators.iter().cloned())
        .collect();
    for (host, provenance) in addresses.iter().zip(&mut ready.provenance) {
        observer.preparing(&format!("reading the clock of {}", host.text));
        let reading = match clock::measure(ready.transport.as_ref(), host) {
            Ok(reading) => reading,
            Err(why) => {
                observer.notice(&format!(
                    "warning: the clock of {} could not be compared with this one ({why}): keep \
                     the hosts synchronised, or windows may be misaligned",
                    host.text
                ));
                continue;
            }
        };
        observer.notice(&format!(
            "clock of {}: {:+.2} ms (± {:.2} ms) from this machine's",
            host.text,
            reading.offset_s * 1e3,
            reading.uncertainty_s * 1e3
        ));
        provenance.clock_offset_us = Some(micros(reading.offset_s));
        provenance.clock_uncertainty_us = Some(micros(reading.uncertainty_s));
        if let Some(why) = clock::too_far(&host.text, reading, window) {
            return Err(host_error(ready.transport.as_ref(), why));
        }
    }
    Ok(())
}

#[allow(clippy::cast_possible_truncation)] // seconds of clock offset fit in µs
fn micros(seconds: f64) -> i64 {
    (seconds * 1e6).round() as i64
}

fn described(mut host: HostProvenance, role: &str, cpus: Option<String>) -> HostProvenance {
    host.role = role.to_string();
    host.cpus = cpus;
    host
}

/// One host with the same corobench as this one, copied there if need be.
fn ready(
    transport: &dyn Transport,
    hosts: &Hosts,
    host: &HostAddress,
    observer: &dyn RunObserver,
) -> Result<HostProvenance, EngineError> {
    let binary = hosts.corobench.clone().unwrap_or_else(|| {
        format!(
            "{}/corobench-{}",
            hosts.install_dir.trim_end_matches('/'),
            env!("CARGO_PKG_VERSION")
        )
    });
    observer.preparing(&format!("probing {}", host.text));
    let mut found = probe(transport, host, &binary)?;
    if found.corobench_version != local_version() && hosts.corobench.is_none() {
        observer.preparing(&format!("copying corobench to {}:{binary}", host.text));
        install(transport, host, &hosts.install_dir, &binary)?;
        found = probe(transport, host, &binary)?;
    }
    if found.corobench_version != local_version() {
        return Err(host_error(
            transport,
            format!(
                "{}: {binary} is {:?}, and this is {}: every host must run the same corobench \
                 version; install it there, point `corobench` in [hosts] to it, or leave that \
                 key out so that this binary is copied",
                host.text,
                found.corobench_version,
                local_version()
            ),
        ));
    }
    Ok(found)
}

/// Asks `host` what it is, in one connection of a POSIX shell script.
fn probe(
    transport: &dyn Transport,
    host: &HostAddress,
    binary: &str,
) -> Result<HostProvenance, EngineError> {
    let script = format!(
        "hostname; uname -r; grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-; \
         getconf _NPROCESSORS_ONLN; {} --version 2>/dev/null || echo missing",
        transport::shell_quote(binary)
    );
    let argv = ["sh".to_string(), "-c".to_string(), script];
    let out = transport::run_bounded(
        transport.command(host, &argv),
        &format!("connecting to {}", host.text),
        PROBE_LIMIT,
    )
    .map_err(|why| unreachable_host(transport, host, &why))?;
    let mut lines = out.lines().map(str::trim);
    let mut next = || lines.next().unwrap_or_default().to_string();
    Ok(HostProvenance {
        address: host.text.clone(),
        hostname: next(),
        kernel: next(),
        cpu_model: next(),
        cpu_count: next().parse().unwrap_or(0),
        corobench_version: next(),
        corobench_path: binary.to_string(),
        ..HostProvenance::default()
    })
}

fn unreachable_host(
    transport: &dyn Transport,
    host: &HostAddress,
    why: &transport::BoundedError,
) -> EngineError {
    host_error(
        transport,
        format!("{why}\n  {}", transport.check_hint(host)),
    )
}

/// A host that cannot take part: the spec's to fix where it names the
/// host, a failed environment where corobench made it.
fn host_error(transport: &dyn Transport, message: String) -> EngineError {
    if transport.made_the_hosts() {
        EngineError::MadeHost(message)
    } else {
        EngineError::Host(message)
    }
}

/// Copies this executable to `binary` on `host` (a temporary name, then
/// renamed, so that a broken copy is never taken for a good one).
fn install(
    transport: &dyn Transport,
    host: &HostAddress,
    dir: &str,
    binary: &str,
) -> Result<(), EngineError> {
    let local = std::env::current_exe().map_err(EngineError::OwnExecutable)?;
    let partial = format!("{binary}.part");
    let mkdir = ["mkdir".to_string(), "-p".to_string(), dir.to_string()];
    transport::run_bounded(
        transport.command(host, &mkdir),
        &format!("creating {dir} on {}", host.text),
        PROBE_LIMIT,
    )
    .map_err(|why| unreachable_host(transport, host, &why))?;
    transport::run_bounded(
        transport.copy(&local, host, &partial),
        &format!("copying corobench to {}", host.text),
        COPY_LIMIT,
    )
    .map_err(|why| unreachable_host(transport, host, &why))?;
    let rename = [
        "mv".to_string(),
        "-f".to_string(),
        partial,
        binary.to_string(),
    ];
    transport::run_bounded(
        transport.command(host, &rename),
        &format!("installing corobench on {}", host.text),
        PROBE_LIMIT,
    )
    .map_err(|why| unreachable_host(transport, host, &why))?;
    Ok(())
}
