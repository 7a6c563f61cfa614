//! The size of a process group right now, for the leak check around the
//! measured window (threads and memory before load vs after).

use crate::error::SamplerError;
use crate::group::GroupScanner;
use crate::reader::{PROC_ROOT, ProcReader};
use crate::sampler::check_group;
use crate::sys;

/// A process group's live processes at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessTreeSnapshot {
    /// Live (not zombie) processes.
    pub processes: u32,
    /// OS threads summed over the live processes.
    pub threads: u32,
    /// Resident memory summed over the live processes (pages shared between
    /// forked workers are counted in each, as `ps` does).
    pub rss_bytes: u64,
    /// The live processes, ascending.
    pub pids: Vec<i32>,
}

/// Reads the process group `pgid` once; `pgid` may come as libc's `pid_t`
/// (`i32`) or as `std::process::Child::id` (`u32`).
///
/// # Errors
/// When `pgid` is not a valid group, the group has no live process, or
/// `/proc` cannot be read.
pub fn snapshot(pgid: impl Into<i64>) -> Result<ProcessTreeSnapshot, SamplerError> {
    snapshot_at(PROC_ROOT, check_group(pgid.into())?)
}

pub(crate) fn snapshot_at(proc_root: &str, pgid: i32) -> Result<ProcessTreeSnapshot, SamplerError> {
    let page_size_bytes = sys::page_size_bytes()?;
    let mut members = Vec::new();
    GroupScanner::new(pgid).scan(&mut ProcReader::new(proc_root), &mut members)?;
    let mut snapshot = ProcessTreeSnapshot::default();
    for stat in members.iter().filter(|stat| stat.is_live()) {
        snapshot.processes += 1;
        snapshot.threads += stat.num_threads;
        snapshot.rss_bytes += stat.rss_pages * page_size_bytes;
        snapshot.pids.push(stat.pid);
    }
    if snapshot.processes == 0 {
        return Err(SamplerError::GroupEmpty { pgid });
    }
    snapshot.pids.sort_unstable();
    Ok(snapshot)
}
