//! `target.toml`: the manifest that says how a target is built, started and
//! parametrised (format: docs/targets.md), and where targets are found.

mod inline;
mod parse;
mod protocols;

pub use parse::{NAME_RULE, is_valid_name};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::TargetError;
use crate::parameters::{self, ParameterSpec};

pub use inline::{SERVER_KEYS, inline_servers};
pub use protocols::{PROTOCOL_KEYS, Protocols, Support, UNDECLARED};

/// The concurrency model ids of docs/contract.md.
pub const MODELS: &[&str] = &[
    "goroutine-per-connection",
    "worker-pool",
    "event-loop",
    "event-loop-multi-process",
    "process-per-request",
    "coroutine",
    "work-stealing-async",
    "thread-per-core-io-uring",
    "virtual-threads",
    "goroutine-fan-out",
];

/// The file name of a manifest inside a target's folder.
pub const MANIFEST_FILE: &str = "target.toml";

/// A validated `target.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Manifest {
    /// Equal to the folder name; the `Server` header carries it.
    pub name: String,
    /// A model id from [`MODELS`].
    pub model: String,
    pub summary: String,
    pub language: String,
    /// A server (the default) or a program that runs to completion.
    #[serde(flatten)]
    pub kind: TargetKind,
    /// Whether the server serves the HTTP contract (docs/contract.md) and is
    /// verified against it; `false` for a user's own server, which is
    /// checked by each workload's expectations instead.
    pub contract: bool,
    /// Commands that must be on PATH.
    pub requires: Vec<String>,
    /// How to make an unavailable target available.
    pub hint: Option<String>,
    pub available_if: Option<AvailableIf>,
    /// Commands whose output is recorded as tool versions.
    pub versions: Vec<Vec<String>>,
    pub build: Option<BuildSpec>,
    pub run: RunSpec,
    pub parameters: BTreeMap<String, ParameterSpec>,
    /// `[protocols]`: which of TLS, h2 and h2c the server serves.
    pub protocols: Protocols,
    /// The target's folder (absolute when discovered from an absolute path).
    pub dir: PathBuf,
    /// Where the server already runs, for a spec's `[servers.NAME] url`:
    /// never started or stopped by corobench. `None` for every `target.toml`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attach: Option<crate::attached::Attachment>,
}

/// What a target is: a server that corobench loads, or a program that
/// measures itself and prints its figures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "program", rename_all = "lowercase")]
pub enum TargetKind {
    /// Serves the HTTP contract until it is stopped.
    Server,
    /// Runs to completion and prints its figures as Go benchmark lines.
    Program(ProgramSpec),
}

impl TargetKind {
    /// `server` or `program`, as `target.toml` spells it.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Server => "server",
            Self::Program(_) => "program",
        }
    }
}

/// `[program]` (and `[run] time_limit_s`): what a program target needs and reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProgramSpec {
    /// Whether corobench starts a server target for it (`{server_url}`).
    pub server: ProgramServer,
    /// The units every result line must carry, in the manifest's order.
    pub metrics: Vec<String>,
    /// Past this the program is killed with its whole process tree.
    pub time_limit_s: u64,
}

impl ProgramSpec {
    #[must_use]
    pub fn needs_server(&self) -> bool {
        self.server == ProgramServer::Required
    }

    #[must_use]
    pub fn time_limit(&self) -> Duration {
        Duration::from_secs(self.time_limit_s)
    }
}

/// `[program] server`: whether the program talks to a server target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProgramServer {
    /// The spec names a server target; the program gets its URL as `{server_url}`.
    Required,
    /// The program measures something in-process (a task pool).
    None,
}

/// A command that must exit 0 (and print some text) for a target to be available.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AvailableIf {
    pub command: Vec<String>,
    pub stdout_contains: Vec<String>,
}

/// `[build]`: runs in the target's folder, writes into `{out}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BuildSpec {
    pub command: Vec<String>,
    /// Names (at any depth) or relative paths left out of the source hash.
    pub exclude: Vec<String>,
    /// Folders outside the target's own, relative to it, hashed too.
    pub inputs: Vec<PathBuf>,
    pub env: BTreeMap<String, String>,
}

/// `[run]`: how the target is started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunSpec {
    pub command: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// How long `/healthz` may take to answer 200 (servers only).
    pub ready_timeout_s: u64,
    /// SIGTERM to SIGKILL.
    pub stop_timeout_s: u64,
    /// How corobench tells the server is ready to be measured.
    pub ready: Readiness,
    /// The signal that asks the server to stop (SIGTERM unless the manifest
    /// says otherwise); SIGKILL follows after `stop_timeout_s`.
    pub stop_signal: StopSignal,
    /// The shortest warm-up a trial of this target gets, whatever the spec
    /// says: a runtime that compiles its hot code while serving (a JIT)
    /// would otherwise be measured while it compiles (servers only).
    pub min_warmup_s: u64,
}

/// `[run] ready`: when a started server counts as ready.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Readiness {
    /// `GET PATH` answers 2xx (the contract's `/healthz` answers 200).
    Http(String),
    /// The port accepts a TCP connection.
    Port,
}

impl std::fmt::Display for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Http(path) => write!(f, "GET {path} answered 2xx"),
            Self::Port => f.write_str("the port accepted a connection"),
        }
    }
}

/// `[run] stop_signal`: the signals a server may ask to be stopped with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum StopSignal {
    #[serde(rename = "SIGTERM")]
    Term,
    #[serde(rename = "SIGINT")]
    Int,
    #[serde(rename = "SIGQUIT")]
    Quit,
    #[serde(rename = "SIGHUP")]
    Hup,
}

impl StopSignal {
    /// Every signal by its name, as the manifest spells it.
    pub const NAMES: [(&'static str, Self); 4] = [
        ("SIGTERM", Self::Term),
        ("SIGINT", Self::Int),
        ("SIGQUIT", Self::Quit),
        ("SIGHUP", Self::Hup),
    ];

    /// The signal's name, as the manifest spells it (`SIGTERM`).
    #[must_use]
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, signal)| *signal == self)
            .map_or("SIGTERM", |(name, _)| name)
    }

    /// The signal's number.
    #[must_use]
    pub fn number(self) -> i32 {
        match self {
            Self::Term => libc::SIGTERM,
            Self::Int => libc::SIGINT,
            Self::Quit => libc::SIGQUIT,
            Self::Hup => libc::SIGHUP,
        }
    }
}

impl RunSpec {
    #[must_use]
    pub fn ready_timeout(&self) -> Duration {
        Duration::from_secs(self.ready_timeout_s)
    }

    #[must_use]
    pub fn stop_timeout(&self) -> Duration {
        Duration::from_secs(self.stop_timeout_s)
    }

    #[must_use]
    pub fn min_warmup(&self) -> Duration {
        Duration::from_secs(self.min_warmup_s)
    }
}

impl Manifest {
    /// Reads and validates `<dir>/target.toml`.
    ///
    /// # Errors
    /// An unreadable file, or a manifest error naming the file, line and key.
    pub fn load(dir: &Path) -> Result<Self, TargetError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| TargetError::io("read", &path, e))?;
        Self::parse(&text, &path)
    }

    /// Validates manifest `text` read from `path` (whose folder names the target).
    ///
    /// # Errors
    /// A manifest error naming the file, line and key.
    pub fn parse(text: &str, path: &Path) -> Result<Self, TargetError> {
        parse::parse(text, path)
    }

    /// Defaults filled in, every name and value checked against the manifest.
    ///
    /// # Errors
    /// An unknown parameter or a value out of bounds, naming the target, the
    /// parameter and the allowed values.
    pub fn resolve_parameters(
        &self,
        given: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, TargetError> {
        parameters::resolve(&self.name, &self.parameters, given)
    }

    /// The program's needs, or `None` for a server.
    #[must_use]
    pub fn program(&self) -> Option<&ProgramSpec> {
        match &self.kind {
            TargetKind::Program(spec) => Some(spec),
            TargetKind::Server => None,
        }
    }

    /// The `TOML` file this manifest was read from.
    #[must_use]
    pub fn path(&self) -> PathBuf {
        self.dir.join(MANIFEST_FILE)
    }
}

/// Every `<targets_dir>/<name>/target.toml`, sorted by name. Folders without a
/// manifest hold shared code and are skipped.
///
/// # Errors
/// An unreadable directory, or every invalid manifest (all of them listed).
pub fn discover(targets_dir: &Path) -> Result<Vec<Manifest>, TargetError> {
    let entries =
        std::fs::read_dir(targets_dir).map_err(|e| TargetError::io("list", targets_dir, e))?;
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| TargetError::io("list", targets_dir, e))?;
        let path = entry.path();
        if path.is_dir() && path.join(MANIFEST_FILE).is_file() {
            dirs.push(path);
        }
    }
    dirs.sort();
    let (manifests, mut errors): (Vec<_>, Vec<_>) = dirs
        .iter()
        .map(|dir| Manifest::load(dir))
        .partition(Result::is_ok);
    match errors.len() {
        0 => Ok(manifests.into_iter().map(Result::unwrap).collect()),
        1 => Err(errors.remove(0).unwrap_err()),
        _ => Err(TargetError::Manifests {
            errors: errors.into_iter().map(Result::unwrap_err).collect(),
        }),
    }
}

/// The targets folder, made absolute: `explicit` (the folder the caller asks for),
/// else `$COROBENCH_TARGETS`, else `./targets`, else the repository's
/// `targets/` next to the executable (`target/release/corobench` →
/// `target/release/../../targets`).
///
/// # Errors
/// An explicit or environment path that is not a directory, or nothing found.
pub fn find_targets_dir(explicit: Option<&Path>) -> Result<PathBuf, TargetError> {
    if let Some(dir) = explicit {
        return existing_dir(dir, "asked for");
    }
    if let Some(dir) = std::env::var_os("COROBENCH_TARGETS").filter(|v| !v.is_empty()) {
        return existing_dir(Path::new(&dir), "from COROBENCH_TARGETS");
    }
    let mut tried = Vec::new();
    let cwd_targets = PathBuf::from("targets");
    if cwd_targets.is_dir() {
        return absolute(&cwd_targets);
    }
    tried.push("./targets".to_string());
    if let Ok(exe) = std::env::current_exe()
        && let Some(repo) = exe.parent().and_then(Path::parent).and_then(Path::parent)
    {
        let beside = repo.join("targets");
        if beside.is_dir() {
            return Ok(beside);
        }
        tried.push(beside.display().to_string());
    }
    Err(TargetError::TargetsDirNotFound { tried })
}

/// Absolute, so that manifests and messages name their folders unambiguously.
fn absolute(dir: &Path) -> Result<PathBuf, TargetError> {
    std::path::absolute(dir).map_err(|e| TargetError::io("resolve", dir, e))
}

fn existing_dir(dir: &Path, source: &str) -> Result<PathBuf, TargetError> {
    if dir.is_dir() {
        absolute(dir)
    } else {
        Err(TargetError::TargetsDirNotFound {
            tried: vec![format!(
                "{} ({source}), which is not a directory",
                dir.display()
            )],
        })
    }
}
