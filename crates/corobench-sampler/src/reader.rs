//! Reads `/proc` files into reused buffers, telling "the process is gone"
//! (a normal event while a target runs) apart from real failures.

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, Read as _};

use corobench_target::procfs::{self, ParseError, ProcStat};

use crate::error::SamplerError;
use crate::ledger::ThreadReading;

/// Where the proc file system is mounted on every Linux system.
pub const PROC_ROOT: &str = "/proc";

/// Reads files below a proc root (normally `/proc`; a directory of fake
/// files in tests), reusing one path and one text buffer for every read.
#[derive(Debug)]
pub(crate) struct ProcReader {
    root: String,
    path: String,
    text: String,
}

/// The file vanished with its process, or the process exited while the
/// kernel was producing the file: both mean "gone", not "broken".
fn is_gone(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::NotFound || error.raw_os_error() == Some(libc::ESRCH)
}

impl ProcReader {
    pub(crate) fn new(root: &str) -> Self {
        Self {
            root: root.to_owned(),
            path: String::with_capacity(64),
            text: String::with_capacity(4096),
        }
    }

    fn set_path(&mut self, relative: std::fmt::Arguments<'_>) {
        self.path.clear();
        self.path.push_str(&self.root);
        self.path.push('/');
        let _ = self.path.write_fmt(relative);
    }

    /// Reads the file at `self.path` into `self.text`; `Ok(false)` when gone.
    fn read_current(&mut self) -> Result<bool, SamplerError> {
        self.text.clear();
        let result = File::open(&self.path).and_then(|mut f| f.read_to_string(&mut self.text));
        match result {
            Ok(_) => Ok(true),
            Err(e) if is_gone(&e) => Ok(false),
            Err(source) => Err(SamplerError::Read {
                path: self.path.clone(),
                source,
            }),
        }
    }

    /// `/proc/<pid>/stat`, or `None` when the process is gone.
    pub(crate) fn stat(&mut self, pid: i32) -> Result<Option<ProcStat>, SamplerError> {
        self.set_path(format_args!("{pid}/stat"));
        if !self.read_current()? {
            return Ok(None);
        }
        procfs::parse_stat(&self.text)
            .map(Some)
            .map_err(|source| self.parse_error(source))
    }

    /// One thread: its context switches and, where `schedstat` is asked
    /// for, its run time; `None` when it is gone.
    pub(crate) fn thread(
        &mut self,
        pid: i32,
        tid: i32,
        schedstat: bool,
    ) -> Result<Option<ThreadReading>, SamplerError> {
        if !self.read_thread(pid, tid, "status")? {
            return Ok(None);
        }
        let ctx = procfs::parse_status(&self.text)
            .map_err(|source| self.parse_error(source))?
            .ctx;
        let run_ns = if schedstat {
            // Gone since its status was read: as if it had exited just
            // before, its run time since the previous round is lost.
            let read = self.read_thread(pid, tid, "schedstat")?;
            let first = self.text.split_whitespace().next();
            Some(
                first
                    .filter(|_| read)
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_default(),
            )
        } else {
            None
        };
        Ok(Some(ThreadReading { tid, ctx, run_ns }))
    }

    /// Reads `<pid>/task/<tid>/<file>`; `Ok(false)` when the thread is gone.
    fn read_thread(&mut self, pid: i32, tid: i32, file: &str) -> Result<bool, SamplerError> {
        self.set_path(format_args!("{pid}/task/{tid}/{file}"));
        self.read_current()
    }

    /// Whether the kernel keeps each thread's run time (`schedstat`).
    pub(crate) fn has_schedstat(&self) -> bool {
        std::path::Path::new(&self.root)
            .join("self/schedstat")
            .is_file()
    }

    /// Every process under the root; a missing root is an error, not "gone".
    pub(crate) fn list_pids(&mut self, out: &mut Vec<i32>) -> Result<(), SamplerError> {
        self.path.clear();
        self.path.push_str(&self.root);
        if self.list_numeric(out)? {
            Ok(())
        } else {
            Err(self.read_error(io::Error::from(io::ErrorKind::NotFound)))
        }
    }

    /// Every thread of `pid`; `Ok(false)` when the process is gone.
    pub(crate) fn list_tids(&mut self, pid: i32, out: &mut Vec<i32>) -> Result<bool, SamplerError> {
        self.set_path(format_args!("{pid}/task"));
        self.list_numeric(out)
    }

    fn list_numeric(&mut self, out: &mut Vec<i32>) -> Result<bool, SamplerError> {
        out.clear();
        let entries = match fs::read_dir(&self.path) {
            Ok(entries) => entries,
            Err(e) if is_gone(&e) => return Ok(false),
            Err(source) => return Err(self.read_error(source)),
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) if is_gone(&e) => return Ok(false),
                Err(source) => return Err(self.read_error(source)),
            };
            if let Some(id) = entry.file_name().to_str().and_then(procfs::parse_pid) {
                out.push(id);
            }
        }
        Ok(true)
    }

    fn read_error(&self, source: io::Error) -> SamplerError {
        SamplerError::Read {
            path: self.path.clone(),
            source,
        }
    }

    fn parse_error(&self, source: ParseError) -> SamplerError {
        SamplerError::Parse {
            path: self.path.clone(),
            source,
        }
    }
}
