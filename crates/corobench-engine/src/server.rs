//! The server of a trial: one corobench started fresh for it, or one that
//! was already running at a URL and is measured where it is.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use corobench_target::{AttachedServer, LaunchOptions, RunningTarget};

use crate::prepare::TrialEnvironment;
use crate::trial::TrialError;

/// What a trial measures.
#[derive(Debug)]
pub(crate) enum TrialServer {
    /// Started fresh on the server CPUs; stopped after the trial.
    Started(Box<RunningTarget>),
    /// Already running; neither started nor stopped here.
    Attached(AttachedServer),
}

impl TrialServer {
    pub(crate) fn addr(&self) -> SocketAddr {
        match self {
            Self::Started(target) => target.addr(),
            Self::Attached(server) => server.addr,
        }
    }

    /// The process group the sampler follows; `None` when nothing is known
    /// of an attached server's process.
    pub(crate) fn pgid(&self) -> Option<i32> {
        match self {
            Self::Started(target) => Some(target.pgid()),
            Self::Attached(server) => server.pgid,
        }
    }

    pub(crate) fn serves_contract(&self) -> bool {
        match self {
            Self::Started(target) => target.serves_contract(),
            Self::Attached(_) => false,
        }
    }

    /// Why the server is gone (it exited, or stopped accepting); `None`
    /// while it is there.
    pub(crate) fn gone(&mut self) -> Option<String> {
        match self {
            Self::Started(target) => target.exit_status().map(|status| {
                let left = target.left_behind();
                if left.is_empty() {
                    return format!("it exited: {status}");
                }
                let pids: Vec<String> = left.iter().map(i32::to_string).collect();
                format!(
                    "its command exited ({status}) but left processes {} running: it puts \
                     itself in the background (daemonizes), and is measured only while the \
                     command runs; run it in the foreground (nginx: `daemon off;`)",
                    pids.join(", ")
                )
            }),
            Self::Attached(server) => server.gone(),
        }
    }

    /// The failure with what is known of the server's state: a started
    /// one's exit status and the tail of its stderr.
    pub(crate) fn describe_failure(&mut self, why: &TrialError, tail_lines: usize) -> String {
        let target = match self {
            Self::Attached(server) => {
                let state = server
                    .gone()
                    .unwrap_or_else(|| "still answering".to_owned());
                return format!("{why} (server already running at {}: {state})", server.url);
            }
            Self::Started(target) => target,
        };
        let status = target
            .exit_status()
            .map_or_else(|| "still running".to_string(), |s| s.to_string());
        let tail = target.stderr_tail(tail_lines);
        if tail.trim().is_empty() {
            format!("{why} (target: {status}); it wrote nothing to stderr")
        } else {
            format!("{why} (target: {status}); last lines of its stderr:\n{tail}")
        }
    }

    /// Stops a started server; an attached one is left running.
    pub(crate) fn stop(self) -> Result<(), String> {
        match self {
            Self::Started(target) => target.stop().map(drop).map_err(|e| e.to_string()),
            Self::Attached(_) => Ok(()),
        }
    }
}

/// The server of `target` for one trial: started fresh on the server CPUs
/// and waited for, or found where it already runs.
pub(crate) fn start_or_attach(
    env: &TrialEnvironment,
    target: &str,
    parameters: &BTreeMap<String, String>,
    needs_database: bool,
) -> Result<TrialServer, TrialError> {
    let built = env
        .built
        .get(target)
        .ok_or_else(|| TrialError::NotBuilt(target.to_string()))?;
    if built.manifest.attach.is_some() {
        return corobench_target::attach(&built.manifest)
            .map(TrialServer::Attached)
            .map_err(|source| TrialError::NotThere(Box::new(source)));
    }
    let options = LaunchOptions {
        parameters: parameters.clone(),
        cpus: Some(env.server_cpus.clone()),
        data_dir: env.data_dir.clone(),
        upload_dir: env.work_root.join("uploads"),
        database_url: if needs_database {
            env.database_url.clone()
        } else {
            None
        },
        port: None,
        listen: None,
        work_dir: None,
        ..LaunchOptions::default()
    };
    let mut running = built
        .launch(&options)
        .map_err(|source| TrialError::DidNotStart {
            target: target.to_string(),
            source: Box::new(source),
        })?;
    running
        .wait_healthy(built.manifest.run.ready_timeout())
        .map_err(|e| TrialError::NotHealthy(Box::new(e)))?;
    Ok(TrialServer::Started(Box::new(running)))
}
