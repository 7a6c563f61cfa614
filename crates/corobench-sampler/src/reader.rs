//! Reads `/proc` files into reused buffers, telling "the process is gone"
//! (a normal event while a target runs) apart from real failures.

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, Read as _};

use corobench_target::procfs::{self, CtxSwitches, ParseError, ProcStat};

use crate::error::SamplerError;

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

    /// Context switches of one thread, or `None` when it is gone.
    pub(crate) fn thread_ctx(
        &mut self,
        pid: i32,
        tid: i32,
    ) -> Result<Option<CtxSwitches>, SamplerError> {
        self.set_path(format_args!("{pid}/task/{tid}/status"));
        if !self.read_current()? {
            return Ok(None);
        }
        procfs::parse_status(&self.text)
            .map(|status| Some(status.ctx))
            .map_err(|source| self.parse_error(source))
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
