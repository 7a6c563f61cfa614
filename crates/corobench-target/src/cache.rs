//! The build cache: `<cache>/targets/<name>-<hash16>/`, keyed by the source
//! hash, written atomically (built in a temporary directory, renamed into
//! place on success) so that an interrupted build never looks built.
//!
//! Because of the rename, `{out}` is a temporary path while the build runs:
//! a build must not embed its own output path (run a Python venv as
//! `{out}/venv/bin/python -m ...`, not through its generated scripts).

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::error::TargetError;
use crate::group::ProcessGroup;
use crate::manifest::Manifest;
use crate::{hash, tail, template};

/// Hex digits of the source hash in a cache directory's name.
const HASH_DIGITS: usize = 16;
/// Lines of the build log quoted in an error.
const LOG_TAIL_LINES: usize = 30;

/// Where built targets are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildCache {
    root: PathBuf,
}

/// A target ready to launch: its manifest, its build output and source hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuiltTarget {
    pub manifest: Manifest,
    /// `{out}`: the cache directory, or the target's folder when it has no `[build]`.
    pub out_dir: PathBuf,
    pub source_hash: String,
    /// `{cache}`: the cache root.
    pub cache_root: PathBuf,
    /// The sources too large to read, counted by size and time:
    /// [`crate::SourceIdentity::unread`].
    pub unread_sources: Vec<(String, u64)>,
}

/// What [`BuildCache::build`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildOutcome {
    /// The build ran and succeeded.
    Built,
    /// A build of the same sources was already cached.
    Cached,
    /// The target has no `[build]`.
    NothingToBuild,
}

impl BuildCache {
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// `$COROBENCH_CACHE`, else `$XDG_CACHE_HOME/corobench`, else `~/.cache/corobench`.
    ///
    /// # Errors
    /// None of those variables (nor `HOME`) is set.
    pub fn from_env() -> Result<Self, TargetError> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        var("COROBENCH_CACHE")
            .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("corobench")))
            .or_else(|| var("HOME").map(|d| d.join(".cache").join("corobench")))
            .map(Self::new)
            .ok_or_else(|| TargetError::Config {
                message: "no cache directory: set COROBENCH_CACHE (or XDG_CACHE_HOME or HOME)"
                    .into(),
            })
    }

    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory a build of `manifest`'s current sources lives in, and
    /// what identifies those sources.
    ///
    /// # Errors
    /// The sources cannot be hashed.
    pub fn out_dir(
        &self,
        manifest: &Manifest,
    ) -> Result<(PathBuf, hash::SourceIdentity), TargetError> {
        let identity = hash::source_identity(manifest)?;
        let dir = self.root.join("targets").join(format!(
            "{}-{}",
            manifest.name,
            &identity.hash[..HASH_DIGITS]
        ));
        Ok((dir, identity))
    }

    /// True when the current sources are built (always, without `[build]`).
    ///
    /// # Errors
    /// The sources cannot be hashed.
    pub fn is_built(&self, manifest: &Manifest) -> Result<bool, TargetError> {
        if manifest.build.is_none() {
            return Ok(true);
        }
        Ok(self.out_dir(manifest)?.0.is_dir())
    }

    /// Where a build of target `name` logs: in the cache, so that the log
    /// an error points to is still there when the error is read.
    #[must_use]
    pub fn log_path(&self, name: &str) -> PathBuf {
        self.root().join("logs").join(format!("{name}.build.log"))
    }

    /// Builds `manifest` unless its current sources are cached; the build's
    /// output goes to `log`.
    ///
    /// # Errors
    /// The build failed (with the command, its status and the log's last
    /// lines), or the cache cannot be written.
    pub fn build(&self, manifest: &Manifest, log: &Path) -> Result<BuiltTarget, TargetError> {
        self.build_with_outcome(manifest, log)
            .map(|(built, _)| built)
    }

    /// [`BuildCache::build`], also saying whether anything was built.
    ///
    /// # Errors
    /// As [`BuildCache::build`].
    pub fn build_with_outcome(
        &self,
        manifest: &Manifest,
        log: &Path,
    ) -> Result<(BuiltTarget, BuildOutcome), TargetError> {
        let (out_dir, identity) = self.out_dir(manifest)?;
        let built = |out_dir: PathBuf| BuiltTarget {
            manifest: manifest.clone(),
            out_dir,
            source_hash: identity.hash.clone(),
            cache_root: self.root.clone(),
            unread_sources: identity.unread.clone(),
        };
        if manifest.build.is_none() {
            return Ok((built(manifest.dir.clone()), BuildOutcome::NothingToBuild));
        }
        if out_dir.is_dir() {
            return Ok((built(out_dir), BuildOutcome::Cached));
        }
        let partial = partial_dir(&out_dir);
        create_dir(&partial)?;
        let result = self.run_build(manifest, &partial, log);
        if let Err(error) = result {
            let _ = std::fs::remove_dir_all(&partial);
            return Err(error);
        }
        if let Err(error) = std::fs::rename(&partial, &out_dir) {
            // A concurrent build of the same sources may have won the race.
            let _ = std::fs::remove_dir_all(&partial);
            if !out_dir.is_dir() {
                return Err(TargetError::io(
                    "rename the finished build to",
                    &out_dir,
                    error,
                ));
            }
        }
        Ok((built(out_dir), BuildOutcome::Built))
    }

    fn run_build(&self, manifest: &Manifest, out: &Path, log: &Path) -> Result<(), TargetError> {
        let Some(build) = &manifest.build else {
            return Ok(());
        };
        let values: BTreeMap<String, String> = [
            ("out", out),
            ("dir", manifest.dir.as_path()),
            ("cache", self.root.as_path()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.display().to_string()))
        .collect();
        let expand = |text: &str| {
            template::expand(text, &values).map_err(|e| manifest_error(manifest, &e.to_string()))
        };
        let args = build
            .command
            .iter()
            .map(|a| expand(a))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(parent) = log.parent() {
            create_dir(parent)?;
        }
        let log_file = File::create(log).map_err(|e| TargetError::io("create", log, e))?;
        let log_err = log_file
            .try_clone()
            .map_err(|e| TargetError::io("open", log, e))?;
        let mut command = Command::new(&args[0]);
        command
            .args(&args[1..])
            .current_dir(&manifest.dir)
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err);
        for (key, value) in &build.env {
            command.env(key, expand(value)?);
        }
        let what = format!("building target {}", manifest.name);
        let mut group = ProcessGroup::spawn(&mut command, None, &what)?;
        let end = wait_for_build(&mut group);
        match end {
            Some(status) if status.success() => Ok(()),
            status => Err(TargetError::Build {
                target: manifest.name.clone(),
                command: crate::command::display(&args),
                status: status.map_or_else(
                    || "ended with an unknown status".into(),
                    |s| format!("failed ({s})"),
                ),
                log: log.to_path_buf(),
                log_tail: tail::last_lines(log, LOG_TAIL_LINES),
            }),
        }
    }
}

/// Waits as long as the build takes; then makes sure nothing of it lingers.
fn wait_for_build(group: &mut ProcessGroup) -> Option<std::process::ExitStatus> {
    while group.exit_status().is_none() {
        std::thread::sleep(Duration::from_millis(50));
    }
    // Build tools that leave daemons behind (compiler servers) lose them here.
    group
        .stop(libc::SIGTERM, true, Duration::from_secs(5))
        .status
}

/// `<cache>/targets/.<name>-<hash16>.partial-<pid>`: unique per process, so
/// concurrent builds never share one. Leftovers of interrupted builds (whose
/// process is gone) are removed on the way.
fn partial_dir(out_dir: &Path) -> PathBuf {
    let name = out_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.partial-");
    let leftovers = out_dir.parent().and_then(|p| std::fs::read_dir(p).ok());
    for entry in leftovers.into_iter().flatten().filter_map(Result::ok) {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let pid = file_name
            .strip_prefix(&prefix)
            .and_then(|p| p.parse::<libc::pid_t>().ok());
        if pid.is_some_and(|pid| pid == own_pid() || !process_exists(pid)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    out_dir.with_file_name(format!("{prefix}{}", own_pid()))
}

fn own_pid() -> libc::pid_t {
    // SAFETY: getpid has no preconditions.
    unsafe { libc::getpid() }
}

fn process_exists(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 || *libc::__errno_location() == libc::EPERM }
}

fn create_dir(dir: &Path) -> Result<(), TargetError> {
    std::fs::create_dir_all(dir).map_err(|e| TargetError::io("create", dir, e))
}

fn manifest_error(manifest: &Manifest, message: &str) -> TargetError {
    TargetError::Manifest {
        path: manifest.path(),
        line: None,
        key: "build".into(),
        message: message.to_string(),
    }
}
