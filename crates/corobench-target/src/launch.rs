//! Launching a built target: its command and environment with every
//! placeholder filled, in its own guarded process group, pinned, logging to
//! files in its work directory.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::net::{IpAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cache::BuiltTarget;
use crate::cpuset::CpuSet;
use crate::error::TargetError;
use crate::group::ProcessGroup;
use crate::health::Probe;
use crate::protocol::Protocol;
use crate::running::RunningTarget;
use crate::template;
use crate::tls::TlsFiles;

/// How a target is started.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    /// Parameter values by name; missing ones take the manifest's defaults.
    pub parameters: BTreeMap<String, String>,
    /// CPUs the target runs on (applied before it executes).
    pub cpus: Option<CpuSet>,
    /// `DATA_DIR`, holding `payload.bin` (see [`crate::ensure_payload`]).
    pub data_dir: PathBuf,
    /// `UPLOAD_DIR`; created if missing.
    pub upload_dir: PathBuf,
    /// `DATABASE_URL`; unset in the target's environment when `None`.
    pub database_url: Option<String>,
    /// A fixed port; `None` picks a free one (and retries on a clash).
    pub port: Option<u16>,
    /// The address the target binds (`LISTEN_ADDR`, `{listen_addr}`);
    /// `None` is 127.0.0.1, as the contract says. Health checks and probes
    /// use it too, or 127.0.0.1 when it is 0.0.0.0 (every address).
    pub listen: Option<IpAddr>,
    /// `WORK_DIR`, where `stdout.log` and `stderr.log` go and which is kept
    /// afterwards; `None` makes a fresh one that is removed when the target
    /// stops.
    pub work_dir: Option<PathBuf>,
    /// What the target serves (`HTTP_PROTOCOL`); the manifest must declare it.
    pub protocol: Protocol,
    /// The run's certificates (`TLS_CERT`, `TLS_KEY`, `{tls_cert}`,
    /// `{tls_key}`), required by a protocol over TLS and handed to the
    /// target only then.
    pub tls: Option<TlsFiles>,
}

/// What differs between starting a server and a program; the rest (the
/// command, its folder, `stderr.log`, the manifest's environment, the
/// guarded group) is the same for both.
pub(crate) struct SpawnPlan<'a> {
    /// Every placeholder's value.
    pub values: BTreeMap<String, String>,
    /// The contract's variables: set when `Some`, removed when `None` so
    /// that none leaks in from corobench's own environment.
    pub contract_env: Vec<(&'static str, Option<OsString>)>,
    pub stdout: Stdio,
    pub work_dir: &'a Path,
    pub cpus: Option<&'a CpuSet>,
    /// "target NAME" or "program NAME", for messages.
    pub what: String,
}

/// The parameters and the work directory a target starts with.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub parameters: BTreeMap<String, String>,
    pub work_dir: PathBuf,
    /// The directory was made for this run and goes when it ends.
    pub owns_work_dir: bool,
}

/// The options with every path absolute and the parameters resolved.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub parameters: BTreeMap<String, String>,
    pub cpus: Option<CpuSet>,
    pub data_dir: PathBuf,
    pub upload_dir: PathBuf,
    pub database_url: Option<String>,
    pub work_dir: PathBuf,
    pub listen: Option<IpAddr>,
    pub protocol: Protocol,
    /// Set when the protocol runs over TLS.
    pub tls: Option<TlsFiles>,
    /// How readiness is probed: in the protocol the target serves.
    pub probe: Probe,
}

impl BuiltTarget {
    /// Starts the target as a direct child in its own process group. The
    /// port is known at once but may change while [`RunningTarget::wait_healthy`]
    /// retries a clash; read it after that.
    ///
    /// Call this from a thread that outlives the target: the target is
    /// SIGKILLed (`PR_SET_PDEATHSIG`) when the thread that started it ends.
    ///
    /// # Errors
    /// Bad parameters or CPUs, unwritable directories, a program that cannot start.
    pub fn launch(&self, options: &LaunchOptions) -> Result<RunningTarget, TargetError> {
        if self.manifest.program().is_some() {
            let message = format!(
                "target {} is a program, not a server: it runs to completion and serves nothing",
                self.manifest.name
            );
            return Err(TargetError::Config { message });
        }
        for (dir, field) in [
            (&options.data_dir, "data_dir"),
            (&options.upload_dir, "upload_dir"),
        ] {
            if dir.as_os_str().is_empty() {
                let message = format!(
                    "launching {}: LaunchOptions::{field} is empty",
                    self.manifest.name
                );
                return Err(TargetError::Config { message });
            }
        }
        let (tls, probe) = self.protocol_setup(options)?;
        let prepared = self.prepare_run(
            &options.parameters,
            options.cpus.as_ref(),
            options.work_dir.as_deref(),
        )?;
        let owns_work_dir = prepared.owns_work_dir;
        let work_dir = prepared.work_dir.clone();
        let started = self.start_prepared(options, prepared, tls, probe);
        let (resolved, group, port) = match started {
            Ok(started) => started,
            Err(error) => {
                // A folder made for a target that never ran holds nothing
                // worth keeping: the error says what went wrong.
                if owns_work_dir {
                    let _ = std::fs::remove_dir_all(&work_dir);
                }
                return Err(error);
            }
        };
        Ok(RunningTarget::new(
            self.clone(),
            resolved,
            group,
            port,
            options.port.is_none(),
            owns_work_dir,
        ))
    }

    /// Resolves the options' folders, picks the port and spawns the group.
    fn start_prepared(
        &self,
        options: &LaunchOptions,
        prepared: Prepared,
        tls: Option<TlsFiles>,
        probe: Probe,
    ) -> Result<(Resolved, ProcessGroup, u16), TargetError> {
        let resolved = Resolved {
            parameters: prepared.parameters,
            cpus: options.cpus.clone(),
            data_dir: absolute(&options.data_dir)?,
            upload_dir: absolute(&options.upload_dir)?,
            database_url: options.database_url.clone(),
            work_dir: prepared.work_dir,
            listen: options.listen,
            protocol: options.protocol,
            tls,
            probe,
        };
        for dir in [&resolved.data_dir, &resolved.upload_dir] {
            std::fs::create_dir_all(dir).map_err(|e| TargetError::io("create", dir, e))?;
        }
        let port = match options.port {
            Some(port) => port,
            None => free_port()?,
        };
        let group = self.spawn_group(&resolved, port)?;
        Ok((resolved, group, port))
    }

    /// The certificates the target gets (only over TLS) and how its
    /// readiness is probed; refuses a protocol the manifest does not declare
    /// or one over TLS without certificates.
    fn protocol_setup(
        &self,
        options: &LaunchOptions,
    ) -> Result<(Option<TlsFiles>, Probe), TargetError> {
        let protocol = options.protocol;
        if let Err(reason) = self.manifest.protocols.supports(protocol) {
            let message = format!(
                "target {} does not serve {protocol}: {reason}",
                self.manifest.name
            );
            return Err(TargetError::Config { message });
        }
        if !protocol.tls {
            return Ok((None, Probe::cleartext(protocol)));
        }
        let Some(files) = &options.tls else {
            let message = format!(
                "launching {} over {protocol}: no certificates were given (LaunchOptions::tls)",
                self.manifest.name
            );
            return Err(TargetError::Config { message });
        };
        let probe = Probe::over_tls(protocol, files)?;
        Ok((Some(files.clone()), probe))
    }

    /// What both kinds of target start with: the parameters resolved, the
    /// CPUs checked, the work directory made (a fresh one when none is given).
    pub(crate) fn prepare_run(
        &self,
        parameters: &BTreeMap<String, String>,
        cpus: Option<&CpuSet>,
        work_dir: Option<&Path>,
    ) -> Result<Prepared, TargetError> {
        let parameters = self.manifest.resolve_parameters(parameters)?;
        if let Some(cpus) = cpus {
            cpus.validate()?;
        }
        let (work_dir, owns_work_dir) = match work_dir {
            Some(dir) => (absolute(dir)?, false),
            None => (fresh_work_dir(&self.manifest.name)?, true),
        };
        std::fs::create_dir_all(&work_dir).map_err(|e| TargetError::io("create", &work_dir, e))?;
        Ok(Prepared {
            parameters,
            work_dir,
            owns_work_dir,
        })
    }

    /// One attempt at starting the target on `port`.
    pub(crate) fn spawn_group(
        &self,
        resolved: &Resolved,
        port: u16,
    ) -> Result<ProcessGroup, TargetError> {
        let text = |path: &Path| path.display().to_string();
        let mut values = self.base_placeholder_values(&resolved.parameters, &resolved.work_dir)?;
        values.insert("port".into(), port.to_string());
        let listen = resolved.listen.unwrap_or(IpAddr::from([127, 0, 0, 1]));
        values.insert("listen_addr".into(), listen.to_string());
        values.insert("data_dir".into(), text(&resolved.data_dir));
        values.insert("upload_dir".into(), text(&resolved.upload_dir));
        values.insert(
            "database_url".into(),
            resolved.database_url.clone().unwrap_or_default(),
        );
        let tls = resolved.tls.as_ref();
        let tls_path = |path: fn(&TlsFiles) -> &PathBuf| tls.map(|files| path(files).clone());
        let cert = tls_path(|files| &files.cert);
        let key = tls_path(|files| &files.key);
        for (name, path) in [("tls_cert", &cert), ("tls_key", &key)] {
            values.insert(name.into(), path.as_deref().map(text).unwrap_or_default());
        }
        let contract_env = vec![
            ("PORT", Some(port.to_string().into())),
            ("LISTEN_ADDR", Some(listen.to_string().into())),
            ("TARGET_NAME", Some(self.manifest.name.clone().into())),
            ("DATA_DIR", Some(resolved.data_dir.clone().into())),
            ("UPLOAD_DIR", Some(resolved.upload_dir.clone().into())),
            ("WORK_DIR", Some(resolved.work_dir.clone().into())),
            (
                "DATABASE_URL",
                resolved.database_url.clone().map(Into::into),
            ),
            ("HTTP_PROTOCOL", Some(resolved.protocol.env_value().into())),
            ("TLS_CERT", cert.map(Into::into)),
            ("TLS_KEY", key.map(Into::into)),
        ];
        self.spawn_process(SpawnPlan {
            values,
            contract_env,
            stdout: Stdio::from(log_file(&resolved.work_dir.join("stdout.log"))?),
            work_dir: &resolved.work_dir,
            cpus: resolved.cpus.as_ref(),
            what: format!("target {}", self.manifest.name),
        })
    }

    /// Starts `[run].command` with every placeholder filled, in the target's
    /// folder, in its own guarded process group, stderr to `stderr.log`.
    pub(crate) fn spawn_process(&self, plan: SpawnPlan<'_>) -> Result<ProcessGroup, TargetError> {
        let manifest = &self.manifest;
        let expand = |text: &str| {
            template::expand(text, &plan.values).map_err(|error| TargetError::Manifest {
                path: manifest.path(),
                line: None,
                key: "run".into(),
                message: error.to_string(),
            })
        };
        let args = manifest
            .run
            .command
            .iter()
            .map(|a| expand(a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut command = Command::new(&args[0]);
        command
            .args(&args[1..])
            .current_dir(absolute(&manifest.dir)?)
            .stdin(Stdio::null())
            .stdout(plan.stdout)
            .stderr(log_file(&plan.work_dir.join("stderr.log"))?);
        for (name, value) in plan.contract_env {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        for (key, value) in &manifest.run.env {
            command.env(key, expand(value)?);
        }
        ProcessGroup::spawn(&mut command, plan.cpus, &plan.what)
    }

    /// The placeholders every kind of target has: its parameters, `{out}`,
    /// `{dir}`, `{cache}` and `{work}`.
    pub(crate) fn base_placeholder_values(
        &self,
        parameters: &BTreeMap<String, String>,
        work_dir: &Path,
    ) -> Result<BTreeMap<String, String>, TargetError> {
        let text = |path: &Path| path.display().to_string();
        let mut values = parameters.clone();
        values.insert("out".into(), text(&absolute(&self.out_dir)?));
        values.insert("dir".into(), text(&absolute(&self.manifest.dir)?));
        values.insert("cache".into(), text(&absolute(&self.cache_root)?));
        values.insert("work".into(), text(work_dir));
        Ok(values)
    }
}

/// A port that was free a moment ago: bound on 127.0.0.1:0, read, released.
///
/// # Errors
/// Binding failed.
pub fn free_port() -> Result<u16, TargetError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|source| TargetError::Os {
        call: "bind 127.0.0.1:0",
        source,
    })?;
    let addr = listener.local_addr().map_err(|source| TargetError::Os {
        call: "getsockname",
        source,
    })?;
    Ok(addr.port())
}

fn absolute(path: &Path) -> Result<PathBuf, TargetError> {
    std::path::absolute(path).map_err(|e| TargetError::io("resolve", path, e))
}

fn log_file(path: &Path) -> Result<File, TargetError> {
    File::create(path).map_err(|e| TargetError::io("create", path, e))
}

/// `<tmp>/corobench-<pid>-<name>-<n>`, unique within this process.
fn fresh_work_dir(name: &str) -> Result<PathBuf, TargetError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("corobench-{}-{name}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir); // left by an earlier process with our pid
    std::fs::create_dir_all(&dir).map_err(|e| TargetError::io("create", &dir, e))?;
    Ok(dir)
}
