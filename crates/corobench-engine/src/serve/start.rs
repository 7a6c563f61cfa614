//! Getting the one target `serve` serves ready to announce: it can run
//! here, is built (or taken from the cache), listens where it was told,
//! is healthy, keeps running and, with a contract, keeps it. Each step
//! says what it does through `progress`; a failure is a [`ServeError`].

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

use corobench_target::{
    Availability, BuiltTarget, CpuSet, LaunchOptions, Manifest, RunningTarget, TargetError,
};
use corobench_verify::RuleResult;

use crate::verification;
use crate::workspace::Workspace;

/// Lines of the target's stderr quoted when it fails.
pub const STDERR_TAIL_LINES: usize = 20;

/// Why a target cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A program target: it runs to completion and serves nothing.
    #[error(
        "{name} is a program target: it runs to completion and serves nothing; serve a server \
         target"
    )]
    Program { name: String },
    /// A toolchain or tool the target needs is missing here.
    #[error(
        "{name} cannot run here: {reason}{}",
        hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default()
    )]
    Unavailable {
        name: String,
        reason: String,
        hint: Option<String>,
    },
    #[error("{name} did not build: {source}")]
    Build {
        name: String,
        source: Box<TargetError>,
    },
    /// The port asked for is taken: the target could not bind it, and its
    /// health check and verification would reach the other process.
    #[error("{ip}:{port} cannot be bound ({source}); another process listens there")]
    PortTaken {
        ip: IpAddr,
        port: u16,
        source: std::io::Error,
    },
    #[error("{name} did not start: {source}")]
    Launch {
        name: String,
        source: Box<TargetError>,
    },
    #[error("{name} did not become healthy: {source}")]
    Unhealthy {
        name: String,
        source: Box<TargetError>,
    },
    /// The target exited after its checks: they may have reached another
    /// server on its port.
    #[error(
        "{name} exited ({status}) before it was announced; last lines of its stderr:\n\
         {stderr_tail}"
    )]
    Exited {
        name: String,
        status: String,
        stderr_tail: String,
    },
    /// The running target broke rules of the contract.
    #[error(
        "{name} breaks the contract (docs/contract.md), so it is not served:\n  {}",
        reasons.join("\n  ")
    )]
    BreaksContract { name: String, reasons: Vec<String> },
}

/// Refuses a target this host cannot run (a toolchain or tool missing).
///
/// # Errors
/// [`ServeError::Unavailable`].
pub fn runs_here(manifest: &Manifest) -> Result<(), ServeError> {
    if let Availability::Unavailable { reason, hint } = manifest.availability() {
        return Err(ServeError::Unavailable {
            name: manifest.name.clone(),
            reason,
            hint,
        });
    }
    Ok(())
}

/// Refuses a program target, and one this host cannot run.
///
/// # Errors
/// [`ServeError::Program`], [`ServeError::Unavailable`].
pub fn servable(manifest: &Manifest) -> Result<(), ServeError> {
    if manifest.program().is_some() {
        return Err(ServeError::Program {
            name: manifest.name.clone(),
        });
    }
    runs_here(manifest)
}

/// Builds the target in the workspace (or takes it from the cache),
/// saying so through `progress`.
///
/// # Errors
/// [`ServeError::Build`].
pub fn build(
    workspace: &Workspace,
    manifest: &Manifest,
    progress: fn(&str),
) -> Result<BuiltTarget, ServeError> {
    progress(&format!(
        "building {} (or taking it from the cache)",
        manifest.name
    ));
    let log = workspace.cache.log_path(&manifest.name);
    workspace
        .cache
        .build(manifest, &log)
        .map_err(|source| ServeError::Build {
            name: manifest.name.clone(),
            source: Box::new(source),
        })
}

/// Where and how the served target runs.
#[derive(Debug, Default)]
pub struct Placement {
    pub parameters: BTreeMap<String, String>,
    pub cpus: Option<CpuSet>,
    /// The port asked for; a free one without.
    pub port: Option<u16>,
    /// The address it binds (`LISTEN_ADDR`); 127.0.0.1 without.
    pub listen: Option<IpAddr>,
    /// What it serves (`HTTP_PROTOCOL`), and over TLS the certificates
    /// (`TLS_CERT`, `TLS_KEY`).
    pub protocol: corobench_model::Protocol,
    pub tls: Option<corobench_target::TlsFiles>,
}

/// Launches the target and waits until it is healthy.
///
/// # Errors
/// A port asked for that is taken, a target that does not start or does
/// not become healthy.
pub fn start(
    workspace: &Workspace,
    built: &BuiltTarget,
    placement: Placement,
    progress: fn(&str),
) -> Result<RunningTarget, ServeError> {
    let name = &built.manifest.name;
    if let Some(port) = placement.port {
        port_free(placement.listen.unwrap_or(Ipv4Addr::LOCALHOST.into()), port)?;
    }
    progress(&format!("starting {name}"));
    let options = LaunchOptions {
        parameters: placement.parameters,
        cpus: placement.cpus,
        data_dir: workspace.data_dir.clone(),
        upload_dir: workspace.work_dir.join("uploads"),
        database_url: None,
        port: placement.port,
        listen: placement.listen,
        work_dir: None,
        protocol: placement.protocol,
        tls: placement.tls,
    };
    let mut target = built
        .launch(&options)
        .map_err(|source| ServeError::Launch {
            name: name.clone(),
            source: Box::new(source),
        })?;
    target
        .wait_healthy(built.manifest.run.ready_timeout())
        .map_err(|source| ServeError::Unhealthy {
            name: name.clone(),
            source: Box::new(source),
        })?;
    Ok(target)
}

/// Whether `port` can be bound on `ip`: another process listening there
/// would take the target's health check and verification.
fn port_free(ip: IpAddr, port: u16) -> Result<(), ServeError> {
    std::net::TcpListener::bind((ip, port))
        .map(drop)
        .map_err(|source| ServeError::PortTaken { ip, port, source })
}

/// The target must still run once it was checked: a process that exited
/// (it could not bind, say) may have let the checks reach another server
/// on its port, and is never announced.
///
/// # Errors
/// [`ServeError::Exited`].
pub fn still_running(target: &mut RunningTarget) -> Result<(), ServeError> {
    let Some(status) = target.exit_status() else {
        return Ok(());
    };
    Err(ServeError::Exited {
        name: target.name().to_owned(),
        status: status.to_string(),
        stderr_tail: target.stderr_tail(STDERR_TAIL_LINES),
    })
}

/// Checks the running target against the contract (no database runs, so
/// `/db` must answer 503); warnings go to `progress`.
///
/// # Errors
/// [`ServeError::BreaksContract`] with every rule it broke.
pub fn verify_running(
    target: &RunningTarget,
    manifest: &Manifest,
    progress: fn(&str),
) -> Result<(), ServeError> {
    progress(&format!("verifying {}", manifest.name));
    let results = verification::check_running(target, manifest, None, None);
    for warning in results.iter().filter(|r| !r.is_pass() && !r.is_fail()) {
        progress(&format!(
            "warning: {}",
            warning.message().unwrap_or_default()
        ));
    }
    let reasons: Vec<String> = results
        .iter()
        .filter(|r| r.is_fail())
        .filter_map(RuleResult::message)
        .map(str::to_owned)
        .collect();
    if results.iter().any(RuleResult::is_fail) {
        return Err(ServeError::BreaksContract {
            name: manifest.name.clone(),
            reasons,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_another_process_listens_on_is_refused_before_the_target_starts() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let error = port_free(Ipv4Addr::LOCALHOST.into(), port).unwrap_err();
        assert!(
            matches!(error, ServeError::PortTaken { port: p, .. } if p == port),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .starts_with(&format!("127.0.0.1:{port} cannot be bound")),
            "{error}"
        );
    }
}
