//! The server of a trial on this machine: one corobench started fresh for
//! it on the server CPUs, or one that was already running at a URL and is
//! measured where it is.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use corobench_model::{Protocol, TrialFlag};
use corobench_sampler::ResourceSeries;
use corobench_target::{AttachedServer, LaunchOptions, RunningTarget, TargetError};

use super::TrialError;
use crate::connection::Trust;
use crate::leak::{Footprint, Unreadable};
use crate::prepare::TrialEnvironment;
use crate::stats_probe::StatsRoute;
use crate::trial::{Server, ServerStopped};

/// Lines of a target's stderr kept with a failed trial.
const STDERR_TAIL_LINES: usize = 20;

/// What a trial measures.
#[derive(Debug)]
pub enum TrialServer {
    /// Started fresh on the server CPUs; stopped after the trial.
    Started(Box<RunningTarget>),
    /// Already running; neither started nor stopped here.
    Attached(AttachedServer),
}

impl TrialServer {
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        match self {
            Self::Started(target) => target.addr(),
            Self::Attached(server) => server.addr,
        }
    }

    /// The process group the sampler follows; `None` when nothing is known
    /// of an attached server's process.
    #[must_use]
    pub fn pgid(&self) -> Option<i32> {
        match self {
            Self::Started(target) => Some(target.pgid()),
            Self::Attached(server) => server.pgid,
        }
    }

    /// Whose word makes its certificate good, when it speaks TLS.
    #[must_use]
    pub fn trust(&self, env: &TrialEnvironment) -> Trust {
        match self {
            Self::Started(target) => Trust::of_started(target.protocol(), env.tls.as_ref()),
            Self::Attached(server) => server.tls.clone().map_or(Trust::Cleartext, Trust::Attached),
        }
    }

    /// How the engine asks a target that serves the contract for its
    /// `/stats`, in the protocol it serves: `None` for a user's server,
    /// so the figures it gives are absent.
    #[must_use]
    pub fn stats_route(&self, env: &TrialEnvironment) -> Option<StatsRoute> {
        let Self::Started(target) = self else {
            return None;
        };
        if !target.serves_contract() {
            return None;
        }
        StatsRoute::new(target.protocol(), &self.trust(env), self.addr())
    }

    #[must_use]
    pub fn serves_contract(&self) -> bool {
        match self {
            Self::Started(target) => target.serves_contract(),
            Self::Attached(_) => false,
        }
    }

    /// Why the server is gone (it exited, or stopped accepting); `None`
    /// while it is there.
    pub fn gone(&mut self) -> Option<String> {
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
    pub fn describe_failure(&mut self, why: &str) -> String {
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
        let tail = target.stderr_tail(STDERR_TAIL_LINES);
        if tail.trim().is_empty() {
            format!("{why} (target: {status}); it wrote nothing to stderr")
        } else {
            format!("{why} (target: {status}); last lines of its stderr:\n{tail}")
        }
    }

    /// Stops a started server; one found running is left so. The flag
    /// says when the stop signal was ignored until SIGKILL.
    ///
    /// # Errors
    /// Stopping it failed.
    pub fn stop(self) -> Result<Option<TrialFlag>, Box<TargetError>> {
        let Self::Started(target) = self else {
            return Ok(None);
        };
        let signal = target.stop_signal();
        let report = target.stop().map_err(Box::new)?;
        Ok(
            (report.needed_sigkill && !report.exited_before_stop).then(|| {
                TrialFlag::KilledAtStop {
                    signal: signal.name().to_owned(),
                    waited_s: report.elapsed.as_secs_f64(),
                }
            }),
        )
    }

    /// What it holds now: its process tree, and the tasks and pool its
    /// `/stats` reports when it serves the contract.
    fn footprint(&self, stats: Option<&StatsRoute>) -> Footprint {
        let tree = self
            .pgid()
            .and_then(|pgid| u32::try_from(pgid).ok())
            .and_then(|pgid| corobench_sampler::snapshot(pgid).ok());
        let stats = stats.and_then(StatsRoute::read).unwrap_or_default();
        Footprint {
            tasks: stats.tasks,
            pool: stats.pool,
            processes: tree.as_ref().map_or(0, |t| t.processes),
            threads: tree.as_ref().map_or(0, |t| t.threads),
            rss_bytes: tree.as_ref().map_or(0, |t| t.rss_bytes),
        }
    }
}

/// The server of `target` for one trial: started fresh on the server CPUs
/// and waited for, or found where it already runs.
///
/// # Errors
/// It was not built, did not start or become healthy, or is not there.
pub fn start_or_attach(
    env: &TrialEnvironment,
    target: &str,
    parameters: &BTreeMap<String, String>,
    needs_database: bool,
    protocol: Protocol,
) -> Result<TrialServer, TrialError> {
    let built = env
        .built
        .get(target)
        .ok_or_else(|| TrialError::NotBuilt(target.to_string()))?;
    if built.manifest.attach.is_some() {
        let server = corobench_target::attach(&built.manifest)
            .map_err(|source| TrialError::NotThere(Box::new(source)))?;
        return speaks(server, protocol).map(TrialServer::Attached);
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
        protocol,
        tls: env.tls.clone().filter(|_| protocol.tls),
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

/// The server already running, when its URL's scheme agrees with the
/// scenario's protocol: TLS with `https://`, cleartext with `http://`.
fn speaks(server: AttachedServer, protocol: Protocol) -> Result<AttachedServer, TrialError> {
    if server.tls.is_some() == protocol.tls {
        return Ok(server);
    }
    let (url_speaks, fix) = if protocol.tls {
        (
            "cleartext",
            "give its https:// URL, or measure it without tls",
        )
    } else {
        (
            "TLS",
            "measure it over TLS (tls = true), or give its http:// URL",
        )
    };
    Err(TrialError::ProtocolMismatch(format!(
        "server {} is at {}, which speaks {url_speaks}, and the scenario speaks {protocol}: {fix}",
        server.name, server.url
    )))
}

/// A trial's server on this machine, with what its middle step sampled.
#[derive(Debug)]
pub struct LocalServer {
    pub(super) target: TrialServer,
    /// How its `/stats` is read, when it serves the contract.
    pub(super) stats: Option<StatsRoute>,
    /// The server's resources over the middle step, sampled from this
    /// process (the measured window exactly, for a load).
    pub(super) sampled: Option<ResourceSeries>,
}

impl Server for LocalServer {
    fn host(&self) -> &str {
        "this machine"
    }

    fn footprint(&mut self) -> Result<Footprint, Unreadable> {
        Ok(self.target.footprint(self.stats.as_ref()))
    }

    fn is_gone(&mut self) -> bool {
        self.target.gone().is_some()
    }

    fn explain(&mut self, why: &str) -> String {
        self.target.describe_failure(why)
    }

    fn attached_url(&self) -> Option<&str> {
        match &self.target {
            TrialServer::Attached(server) => Some(&server.url),
            TrialServer::Started(_) => None,
        }
    }

    fn stop(self) -> ServerStopped {
        let flag = self.target.stop().unwrap_or_else(|error| {
            Some(TrialFlag::Leak {
                what: format!("the target did not stop cleanly: {error}"),
            })
        });
        ServerStopped {
            series: self.sampled,
            flag,
        }
    }
}
