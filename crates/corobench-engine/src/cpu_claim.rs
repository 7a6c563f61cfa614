//! Two runs measuring on the same CPUs at once ruin each other's figures.
//! Each run holds an advisory lock per CPU it uses (server and generator)
//! for as long as it measures; a run that finds one held says so. The lock
//! dies with its process, so a killed run leaves nothing to clean up.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::os::fd::AsRawFd as _;

use corobench_spec::Plan;

use crate::events::RunObserver;

/// The locks a run holds until it is dropped.
#[derive(Debug)]
pub struct CpuClaim {
    _locks: Vec<File>,
}

/// Locks every CPU of the plan; warns about each one another corobench holds.
#[must_use]
pub fn claim(plan: &Plan, observer: &dyn RunObserver) -> CpuClaim {
    let mut cpus: Vec<usize> = plan
        .server_cpus
        .iter()
        .chain(&plan.generator_cpus)
        .copied()
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut locks = Vec::new();
    for cpu in cpus {
        match lock(cpu) {
            Ok(file) => locks.push(file),
            Err(Some(holder)) => observer.notice(&format!(
                "warning: corobench process {holder} is measuring on CPU {cpu} right now; the \
                 figures of both runs will suffer: wait for it to end"
            )),
            Err(None) => {}
        }
    }
    CpuClaim { _locks: locks }
}

/// Locks `cpu`'s file and writes this pid into it; `Err(Some(pid))` when
/// another process holds it, `Err(None)` when locking is not possible here.
fn lock(cpu: usize) -> Result<File, Option<String>> {
    let path = std::env::temp_dir().join(format!("corobench-cpu-{cpu}.lock"));
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|_| None)?;
    // SAFETY: flock only reads the descriptor, which `file` keeps open.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    if !locked {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        let holder = holder.trim();
        return Err(Some(
            if holder.is_empty() { "?" } else { holder }.to_string(),
        ));
    }
    let _ = file.set_len(0);
    let _ = file.seek(SeekFrom::Start(0));
    let _ = write!(file, "{}", std::process::id());
    Ok(file)
}
