//! The counters of a target started in a cgroup of its own: perf_event's
//! cgroup mode, one counter per online CPU and kind, counting whatever runs
//! in the cgroup on that CPU. It needs no descriptor per thread and follows
//! every process of the target, also one that left its process group or was
//! reparented away, and those started after the window opened.

use std::fs::File;
use std::path::Path;

use corobench_model::KernelCounter;
use corobench_target::CpuSet;
use perf_event::Counter;

use super::{ThreadCounters, builder_for, group_threads, refusal, refused_by_env};
use crate::error::SamplerError;

/// Counters of every thread of group `pgid` (and what it starts): in its
/// cgroup's mode when corobench started it in one and the kernel counts
/// cgroups, else attached to each thread with inheritance.
///
/// # Errors
/// When `pgid` is not a valid group or `/proc` cannot be read.
pub fn group_counters(pgid: impl Into<i64>) -> Result<ThreadCounters, SamplerError> {
    let pgid = pgid.into();
    let tids = group_threads(pgid)?;
    let cgroup = i32::try_from(pgid)
        .ok()
        .and_then(corobench_target::cgroup::holding);
    if let Some(dir) = cgroup {
        let counters = attach_cgroup(&dir, tids.len(), &refused_by_env());
        if !counters.none_opened() {
            return Ok(counters);
        }
    }
    Ok(ThreadCounters::attach(&tids))
}

/// Every counter kind in cgroup `dir`, on every online CPU.
pub(crate) fn attach_cgroup(
    dir: &Path,
    threads: usize,
    refused: &[KernelCounter],
) -> ThreadCounters {
    ThreadCounters::attach_with(threads, refused, |kind| open_in_cgroup(kind, dir))
}

fn open_in_cgroup(kind: KernelCounter, dir: &Path) -> Result<Vec<Counter>, String> {
    let cgroup = File::open(dir).map_err(|e| format!("cannot open {}: {e}", dir.display()))?;
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .map_err(|e| format!("cannot read the online CPUs: {e}"))?;
    let cpus = CpuSet::parse(online.trim()).map_err(|e| e.to_string())?;
    let mut counters = Vec::with_capacity(cpus.len());
    for cpu in cpus.iter() {
        let mut builder = builder_for(kind)?;
        builder
            .include_kernel()
            .observe_cgroup(&cgroup)
            .one_cpu(cpu)
            .enabled(true);
        counters.push(builder.build().map_err(|e| refusal(&e))?);
    }
    Ok(counters)
}
