//! Every way managing a target can fail. Each message says what failed,
//! where, and (where there is one) how to fix it.

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

/// An error of the target lifecycle.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// A `target.toml` that does not parse or does not validate.
    #[error("{}{}: {key}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Manifest {
        path: PathBuf,
        line: Option<usize>,
        key: String,
        message: String,
    },

    /// Several manifests were invalid; each error is listed.
    #[error("{} target manifests are invalid:\n{}", errors.len(), join_lines(errors))]
    Manifests { errors: Vec<TargetError> },

    /// A file or directory operation failed. The OS error is part of the
    /// message and not also a `source`: printed with its chain (`{:#}`, as
    /// the binary does), it would otherwise appear twice.
    #[error("cannot {action} {}: {error}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },

    /// No targets directory was found: none was asked for and none is where
    /// one is looked for, or the one asked for is not a directory.
    #[error("no targets directory found (tried {}); set COROBENCH_TARGETS", tried.join(", "))]
    TargetsDirNotFound { tried: Vec<String> },

    /// An unknown parameter name or a value the manifest does not allow.
    #[error("target {target}: parameter {parameter}: {message}")]
    Parameter {
        target: String,
        parameter: String,
        message: String,
    },

    /// A CPU list that does not parse or names CPUs this machine lacks.
    #[error("CPU list {spec:?}: {message}")]
    CpuSet { spec: String, message: String },

    /// A build command that failed.
    #[error(
        "target {target}: build failed: `{command}` {status}; log {}:\n{log_tail}",
        log.display()
    )]
    Build {
        target: String,
        command: String,
        status: String,
        log: PathBuf,
        log_tail: String,
    },

    /// A program that could not be started at all.
    #[error("cannot start `{command}` for {what}: {source}")]
    Spawn {
        what: String,
        command: String,
        #[source]
        source: std::io::Error,
    },

    /// A target whose process exited while it was expected to run. The
    /// log itself goes with the target's work folder: its tail is quoted.
    #[error(
        "target {target} exited ({status}) before it became healthy; last lines of its stderr:\n{stderr_tail}"
    )]
    Exited {
        target: String,
        status: ExitStatus,
        stderr_log: PathBuf,
        stderr_tail: String,
    },

    /// A target that did not become ready in time (the contract's
    /// `GET /healthz` answering 200, or a user server's own readiness).
    #[error(
        "target {target} was not ready on port {port} within {timeout:?}: it was told to listen there (PORT, {{port}}) and waited for until {waited_for}); last lines of its stderr:\n{stderr_tail}"
    )]
    Unhealthy {
        target: String,
        port: u16,
        /// What readiness was waited for, and the last attempt.
        waited_for: String,
        timeout: Duration,
        stderr_log: PathBuf,
        stderr_tail: String,
    },

    /// A target that listens on other ports than the one it was given: it
    /// ignores `{port}` and `PORT`, so waiting longer would not help.
    #[error("target {target} listens on port {} but not on port {port}, the one it was told to listen on (PORT, {{port}} in its command): make it listen where it is told; last lines of its stderr:\n{stderr_tail}", listening.iter().map(u16::to_string).collect::<Vec<_>>().join(", "))]
    ListensElsewhere {
        target: String,
        port: u16,
        listening: Vec<u16>,
        stderr_tail: String,
    },

    /// A target whose command exited while processes it started kept
    /// running: it daemonized. corobench measures (and stops) a server
    /// that stays in the foreground; what it left was stopped.
    #[error(
        "target {target}'s command exited ({status}) but left {} running (pids {}){}: it puts \
         itself in the background (daemonizes), and corobench measures a server only while \
         the command it started runs; run it in the foreground (nginx: `daemon off;`, \
         php-fpm: --nodaemonize, or the server's --foreground flag). What it left was \
         stopped. Last lines of its stderr:\n{stderr_tail}",
        if pids.len() == 1 { "a process" } else { "processes" },
        pids.iter().map(i32::to_string).collect::<Vec<_>>().join(", "),
        if *holds_port { format!(", one of them listening on its port {port}") } else { String::new() }
    )]
    Daemonized {
        target: String,
        status: ExitStatus,
        pids: Vec<i32>,
        port: u16,
        holds_port: bool,
        stderr_tail: String,
    },

    /// A target that could not bind its port.
    #[error("target {target}: port {port} is in use{}", if *retried { " (and so were the ports tried before it)" } else { "" })]
    PortInUse {
        target: String,
        port: u16,
        retried: bool,
    },

    /// A helper command (availability check, psql, initdb) that failed.
    #[error("`{command}` {message}")]
    Command { command: String, message: String },

    /// PostgreSQL is missing, or the throwaway cluster failed.
    #[error("PostgreSQL: {message}")]
    Postgres { message: String },

    /// A server that should already be running (at a URL, under a pid or
    /// a process name) is not there.
    #[error("{message}")]
    NotRunning { message: String },

    /// Settings that cannot work, such as an empty data directory.
    #[error("{message}")]
    Config { message: String },

    /// A system call that failed.
    #[error("{call} failed: {source}")]
    Os {
        call: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl TargetError {
    /// An [`TargetError::Io`] for `path`.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        error: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.into(),
            error,
        }
    }

    /// An [`TargetError::Os`] from `errno`.
    pub(crate) fn last_os(call: &'static str) -> Self {
        Self::Os {
            call,
            source: std::io::Error::last_os_error(),
        }
    }
}

fn join_lines(errors: &[TargetError]) -> String {
    errors
        .iter()
        .map(|e| format!("  {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `{:#}` of an anyhow error prints: the message, then each source.
    fn with_sources(error: &dyn std::error::Error) -> String {
        let mut text = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            text.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        text
    }

    #[test]
    fn an_io_error_names_the_os_error_once() {
        let denied = std::io::Error::from_raw_os_error(libc::EROFS);
        let error = TargetError::io("create", "/cache/data", denied);
        let printed = with_sources(&error);
        assert_eq!(printed.matches("os error").count(), 1, "{printed}");
        assert!(
            printed.starts_with("cannot create /cache/data: "),
            "{printed}"
        );
    }
}
