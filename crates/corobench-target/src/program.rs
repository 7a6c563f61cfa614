//! Running a program target: started as a server is (its own guarded
//! process group, pinned, placeholders filled), then watched until it exits,
//! its time limit passes or it is stopped. Whatever is left of its group
//! afterwards is stopped too, so a program leaves no process behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::cache::BuiltTarget;
use crate::cpuset::CpuSet;
use crate::error::TargetError;
use crate::group::ProcessGroup;
use crate::launch::SpawnPlan;
use crate::manifest::ProgramSpec;
use crate::pipes::Pipes;
use crate::template::SERVER_URL;
use crate::{procfs, tail};

/// The most of a program's stdout that is kept; the rest is read and dropped.
pub const STDOUT_LIMIT: usize = 4 * 1024 * 1024;
/// Lines of stderr a run reports.
const STDERR_TAIL_LINES: usize = 20;
/// How often the wait looks at the exit, the stop flag and the clock.
const POLL: Duration = Duration::from_millis(20);
/// How long output may keep arriving once the group is gone: only a process
/// that escaped the group could hold the pipe open longer.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// How a program is started.
#[derive(Clone, Debug, Default)]
pub struct ProgramOptions {
    /// Parameter values by name; missing ones take the manifest's defaults.
    pub parameters: BTreeMap<String, String>,
    /// CPUs the program runs on (applied before it executes).
    pub cpus: Option<CpuSet>,
    /// `{server_url}`: the base URL of the server the program talks to, such
    /// as `http://127.0.0.1:41234` (a trailing `/` is dropped). Required
    /// exactly when the manifest says `server = "required"`.
    pub server_url: Option<String>,
    /// `WORK_DIR` and `{work}`, where `stderr.log` goes and which is kept
    /// afterwards; `None` makes a fresh one that is removed after the run.
    pub work_dir: Option<PathBuf>,
    /// Replaces the manifest's `time_limit_s`.
    pub time_limit: Option<Duration>,
    /// Set from another thread (a Ctrl-C handler) to stop the program early.
    pub stop: Option<Arc<AtomicBool>>,
}

/// Why a program's run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramEnd {
    /// Its first process exited by itself.
    Exited,
    /// It was still running at its time limit and was killed.
    TimedOut,
    /// The stop flag was set and it was killed.
    Stopped,
}

/// What a finished program did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramRun {
    pub end: ProgramEnd,
    /// The first process's exit status (a signal after a time-out or a
    /// stop); `None` if something else reaped it.
    pub status: Option<ExitStatus>,
    /// From the start to the exit, the time limit or the stop.
    pub elapsed: Duration,
    /// The first [`STDOUT_LIMIT`] bytes of stdout (invalid UTF-8 replaced).
    pub stdout: String,
    /// stdout was longer than [`STDOUT_LIMIT`]; the rest was dropped.
    pub stdout_truncated: bool,
    /// The last 20 lines of stderr.
    pub stderr_tail: String,
    /// Processes of its group still running when its first process exited
    /// (children it did not wait for); they were stopped.
    pub leftover_processes: usize,
    /// Something outlived SIGTERM by `stop_timeout_s` and was SIGKILLed.
    pub needed_sigkill: bool,
}

impl ProgramRun {
    /// The program ended by itself with status 0.
    #[must_use]
    pub fn succeeded(&self) -> bool {
        self.end == ProgramEnd::Exited && self.status.is_some_and(|s| s.success())
    }
}

/// A program started by [`BuiltTarget::spawn_program`]. Dropping it
/// SIGKILLs its group and reaps it.
#[derive(Debug)]
pub struct RunningProgram {
    name: String,
    parameters: BTreeMap<String, String>,
    group: ProcessGroup,
    stdout: Pipes,
    started: Instant,
    time_limit: Duration,
    stop_timeout: Duration,
    stop: Option<Arc<AtomicBool>>,
    work_dir: PathBuf,
    owns_work_dir: bool,
}

impl BuiltTarget {
    /// Starts a program target as a direct child in its own process group
    /// and returns at once, so that another thread can watch its group
    /// (by [`RunningProgram::pgid`]) while [`RunningProgram::wait`] runs.
    ///
    /// Call this from a thread that outlives the program: the program is
    /// SIGKILLed (`PR_SET_PDEATHSIG`) when the thread that started it ends.
    ///
    /// # Errors
    /// A server target, a server URL missing or not needed, bad parameters
    /// or CPUs, an unwritable work directory, a program that cannot start.
    pub fn spawn_program(&self, options: &ProgramOptions) -> Result<RunningProgram, TargetError> {
        let name = &self.manifest.name;
        let spec = self.manifest.program().ok_or_else(|| TargetError::Config {
            message: format!("target {name} is a server, not a program: it prints no results"),
        })?;
        let server_url = server_url(name, spec, options.server_url.as_deref())?;
        let prepared = self.prepare_run(
            &options.parameters,
            options.cpus.as_ref(),
            options.work_dir.as_deref(),
        )?;
        let mut values = self.base_placeholder_values(&prepared.parameters, &prepared.work_dir)?;
        values.extend(server_url.map(|url| (SERVER_URL.to_string(), url)));
        let plan = SpawnPlan {
            values,
            contract_env: vec![
                ("TARGET_NAME", Some(name.into())),
                ("WORK_DIR", Some(prepared.work_dir.clone().into())),
                ("PORT", None),
                ("DATA_DIR", None),
                ("UPLOAD_DIR", None),
                ("DATABASE_URL", None),
            ],
            stdout: Stdio::piped(),
            work_dir: &prepared.work_dir,
            cpus: options.cpus.as_ref(),
            what: format!("program {name}"),
        };
        let started = Instant::now();
        let mut group = match self.spawn_process(plan) {
            Ok(group) => group,
            Err(error) => {
                if prepared.owns_work_dir {
                    let _ = std::fs::remove_dir_all(&prepared.work_dir);
                }
                return Err(error);
            }
        };
        Ok(RunningProgram {
            name: name.clone(),
            parameters: prepared.parameters,
            stdout: Pipes::new(group.take_stdout(), None, STDOUT_LIMIT),
            group,
            started,
            time_limit: options.time_limit.unwrap_or_else(|| spec.time_limit()),
            stop_timeout: self.manifest.run.stop_timeout(),
            stop: options.stop.clone(),
            work_dir: prepared.work_dir,
            owns_work_dir: prepared.owns_work_dir,
        })
    }

    /// [`BuiltTarget::spawn_program`], then [`RunningProgram::wait`].
    ///
    /// # Errors
    /// As those two.
    pub fn run_program(&self, options: &ProgramOptions) -> Result<ProgramRun, TargetError> {
        self.spawn_program(options)?.wait()
    }
}

/// The URL `{server_url}` stands for, checked against what the manifest needs.
fn server_url(
    name: &str,
    spec: &ProgramSpec,
    given: Option<&str>,
) -> Result<Option<String>, TargetError> {
    let given = given.map(|url| url.trim_end_matches('/'));
    match (spec.needs_server(), given) {
        (true, Some(url)) if !url.is_empty() => Ok(Some(url.to_string())),
        (true, _) => Err(TargetError::Config {
            message: format!("program {name} needs a server: name a server target for it"),
        }),
        (false, Some(_)) => Err(TargetError::Config {
            message: format!("program {name} talks to no server ([program] server = \"none\")"),
        }),
        (false, None) => Ok(None),
    }
}

impl RunningProgram {
    /// The program's process group (its first process's pid), for sampling
    /// its processes while it runs.
    #[must_use]
    pub fn pgid(&self) -> i32 {
        self.group.pid()
    }

    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parameters the program runs with, defaults included.
    #[must_use]
    pub fn parameters(&self) -> &BTreeMap<String, String> {
        &self.parameters
    }

    #[must_use]
    pub fn work_dir(&self) -> &Path {
        &self.work_dir
    }

    #[must_use]
    pub fn stderr_log(&self) -> PathBuf {
        self.work_dir.join("stderr.log")
    }

    /// How long the program may run before it is killed.
    #[must_use]
    pub fn time_limit(&self) -> Duration {
        self.time_limit
    }

    /// Waits until the program exits, its time limit passes or the stop flag
    /// is set; then SIGTERMs what is left of its group, SIGKILLs what
    /// outlives `stop_timeout_s`, and reaps everything.
    ///
    /// # Errors
    /// Processes that survived even SIGKILL (stuck in the kernel).
    pub fn wait(mut self) -> Result<ProgramRun, TargetError> {
        let end = self.wait_for_end();
        let elapsed = self.started.elapsed();
        let leftover_processes = match end {
            ProgramEnd::Exited => procfs::live_members(self.pgid()).len(),
            ProgramEnd::TimedOut | ProgramEnd::Stopped => 0,
        };
        let exited_with = self.group.exit_status();
        let report = self
            .group
            .stop(libc::SIGTERM, true, self.stop_timeout)
            .require_all_gone(&format!("program {}", self.name))?;
        // Output written before the group ended is still in the pipe.
        self.stdout.drain(Instant::now() + DRAIN_GRACE);
        Ok(ProgramRun {
            end,
            status: report.status.or(exited_with),
            elapsed,
            stdout: self.stdout.stdout.text(),
            stdout_truncated: self.stdout.stdout.truncated,
            stderr_tail: tail::last_lines(&self.stderr_log(), STDERR_TAIL_LINES),
            leftover_processes,
            needed_sigkill: report.needed_sigkill,
        })
    }

    /// Reads stdout while watching for the first of: the exit, the stop
    /// flag, the time limit.
    fn wait_for_end(&mut self) -> ProgramEnd {
        let deadline = self.started + self.time_limit;
        loop {
            self.stdout.read_for(POLL);
            if self.group.exit_status().is_some() {
                return ProgramEnd::Exited;
            }
            if self.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst)) {
                return ProgramEnd::Stopped;
            }
            if Instant::now() >= deadline {
                return ProgramEnd::TimedOut;
            }
        }
    }
}

impl Drop for RunningProgram {
    fn drop(&mut self) {
        self.group.kill(); // nothing when `wait` has stopped it already
        if self.owns_work_dir {
            let _ = std::fs::remove_dir_all(&self.work_dir);
        }
    }
}
