//! Kernel counters of a set of threads over a measured window: system
//! calls, context switches and minor page faults, counted by the kernel
//! through `perf_event_open` in counting mode (no sampling, no ring buffer:
//! the kernel adds one to a per-task count, and corobench reads it once).
//!
//! The counters are opened through the `perf-event2` crate: its
//! `Tracepoint::with_id` takes the id of `raw_syscalls:sys_enter` read here
//! from tracefs (the crate's own lookup only knows `/sys/kernel/debug`), so
//! no raw `perf_event_open` call is needed.
//!
//! Which threads: every thread that exists when the window opens gets one
//! counter per kind, each with `inherit` set, so the threads and processes
//! it creates later (a worker forked under load, a pool growing) are counted
//! too and their counts add into it, even after they exit. Attaching when
//! the window opens, rather than when the server starts, works the same for
//! a server started fresh per trial and for one started once and measured
//! many times; its cost is one file descriptor per thread and kind, so a
//! tree of more than [`MAX_THREADS`] threads is not counted (the reason is
//! stored with the trial).

use std::io;
use std::path::Path;

use corobench_model::{KernelCounter, KernelCounts, PerfAccess, PerfHappened};
use perf_event::events::{Software, Tracepoint};
use perf_event::{Builder, Counter};

mod cgroup_mode;

pub use cgroup_mode::group_counters;

use crate::error::SamplerError;
use crate::group::GroupScanner;
use crate::reader::{PROC_ROOT, ProcReader};

/// The most threads a window attaches counters to (three descriptors each).
pub const MAX_THREADS: usize = 2048;

/// Names the counters (`syscalls`, `ctx_switches`, `minor_faults`, or
/// `all`, comma-separated) that a trial must run without, as if the kernel
/// had refused them: how a user measures the counters' own overhead, and
/// how the tests check that a refused counter is reported as missing.
pub const REFUSE_ENV: &str = "COROBENCH_REFUSE_COUNTERS";

/// Where tracefs is mounted, newest convention first.
const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Counters attached to a set of threads, counting since they were opened.
#[derive(Debug)]
pub struct ThreadCounters {
    kinds: Vec<(KernelCounter, Vec<Counter>)>,
    missing: Vec<(KernelCounter, String)>,
    threads: u32,
}

impl ThreadCounters {
    /// Attaches every counter kind to every thread in `tids`. Never fails:
    /// a kind the kernel refuses is recorded as missing with the reason,
    /// and a thread that exits before it is attached is skipped.
    #[must_use]
    pub fn attach(tids: &[i32]) -> Self {
        Self::attach_refusing(tids, &refused_by_env())
    }

    /// [`ThreadCounters::attach`] with `refused` treated as refused.
    pub(crate) fn attach_refusing(tids: &[i32], refused: &[KernelCounter]) -> Self {
        Self::attach_with(tids.len(), refused, |kind| {
            if tids.len() > MAX_THREADS {
                return Err(format!(
                    "the tree has {} threads; corobench attaches counters to at most {MAX_THREADS}",
                    tids.len()
                ));
            }
            open_kind(kind, tids)
        })
    }

    /// Counters of every kind, each opened by `open` unless `refused`;
    /// `threads` is how many threads they watch when attached.
    pub(crate) fn attach_with(
        threads: usize,
        refused: &[KernelCounter],
        open: impl Fn(KernelCounter) -> Result<Vec<Counter>, String>,
    ) -> Self {
        let mut set = Self {
            kinds: Vec::new(),
            missing: Vec::new(),
            threads: u32::try_from(threads).unwrap_or(u32::MAX),
        };
        for kind in KernelCounter::ALL {
            let opened = if refused.contains(&kind) {
                Err(format!("refused by {REFUSE_ENV}"))
            } else {
                open(kind)
            };
            match opened {
                Ok(counters) => set.kinds.push((kind, counters)),
                Err(reason) => set.missing.push((kind, reason)),
            }
        }
        set
    }

    /// Whether no kind could be opened for a reason other than being told
    /// to refuse it.
    pub(crate) fn none_opened(&self) -> bool {
        self.kinds.is_empty()
            && self
                .missing
                .iter()
                .any(|(_, reason)| !reason.starts_with("refused by"))
    }

    /// Reads every counter: the counts since [`ThreadCounters::attach`],
    /// and the kinds that are missing, with the reason.
    #[must_use]
    pub fn read(mut self) -> (KernelCounts, Vec<(KernelCounter, String)>) {
        let mut counts = KernelCounts {
            threads: self.threads,
            ..KernelCounts::default()
        };
        for (kind, counters) in &mut self.kinds {
            match counters
                .iter_mut()
                .map(Counter::read)
                .sum::<io::Result<u64>>()
            {
                Ok(total) => counts.set(*kind, Some(total)),
                Err(error) => self
                    .missing
                    .push((*kind, format!("reading the counter failed: {error}"))),
            }
        }
        (counts, self.missing)
    }
}

/// A counter of `kind`, to be told whom to watch.
pub(crate) fn builder_for<'a>(kind: KernelCounter) -> Result<Builder<'a>, String> {
    Ok(match kind {
        KernelCounter::Syscalls => Builder::new(Tracepoint::with_id(syscall_tracepoint_id()?)),
        KernelCounter::ContextSwitches => Builder::new(Software::CONTEXT_SWITCHES),
        KernelCounter::MinorFaults => Builder::new(Software::PAGE_FAULTS_MIN),
    })
}

/// One counter of `kind` per thread; the first refusal decides for all.
fn open_kind(kind: KernelCounter, tids: &[i32]) -> Result<Vec<Counter>, String> {
    let mut builder = builder_for(kind)?;
    // Context switches and system calls happen in the kernel: counting
    // them needs kernel events included (perf_event_paranoid ≤ 1, or
    // CAP_PERFMON).
    builder
        .include_kernel()
        .inherit(true)
        .any_cpu()
        .enabled(true);
    let mut counters = Vec::with_capacity(tids.len());
    for &tid in tids {
        match builder.observe_pid(tid).build() {
            Ok(counter) => counters.push(counter),
            // The thread exited between listing and attaching.
            Err(error) if error.raw_os_error() == Some(libc::ESRCH) => {}
            Err(error) => return Err(refusal(&error)),
        }
    }
    Ok(counters)
}

/// Why `perf_event_open` refused, and what would let it.
pub(crate) fn refusal(error: &io::Error) -> String {
    // Kernel events of a user's own processes: level 1 or lower.
    refusal_given(error, &PerfAccess::here(1))
}

/// [`refusal`] for the facts `access`.
fn refusal_given(error: &io::Error, access: &PerfAccess) -> String {
    match error.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => {
            let advice = access.advice(&PerfHappened::Denied).unwrap_or_default();
            format!("perf_event_open was refused ({error}): {advice}")
        }
        Some(libc::ENOSYS) => format!(
            "this kernel has no perf_event_open ({error}): it was built without \
             CONFIG_PERF_EVENTS, or a container's seccomp profile blocks it"
        ),
        Some(libc::ENOENT | libc::ENODEV | libc::EOPNOTSUPP) => {
            format!("this kernel does not offer the event ({error})")
        }
        _ => format!("perf_event_open failed: {error}"),
    }
}

/// The id of the `raw_syscalls:sys_enter` tracepoint, from tracefs. Where
/// tracefs is not mounted yet and corobench may mount it (root), it mounts
/// it at `/sys/kernel/tracing`, as `perf` itself does.
fn syscall_tracepoint_id() -> Result<u64, String> {
    read_tracepoint_id().or_else(|not_found| {
        if mount_tracefs() {
            read_tracepoint_id()
        } else {
            Err(not_found)
        }
    })
}

fn read_tracepoint_id() -> Result<u64, String> {
    let mut tried = Vec::new();
    for root in TRACEFS {
        let path = Path::new(root).join("events/raw_syscalls/sys_enter/id");
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                return text
                    .trim()
                    .parse()
                    .map_err(|_| format!("{} holds no tracepoint id", path.display()));
            }
            Err(error) => tried.push((path, error)),
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mounted = mounts
        .lines()
        .any(|m| m.split_whitespace().nth(2) == Some("tracefs"));
    Err(tracepoint_missing(&tried, mounted))
}

/// Why the tracepoint's id could not be read at the paths `tried`, with
/// the fix that applies: a permission to give where tracefs is there but
/// not readable, a mount only where it is not `mounted`.
fn tracepoint_missing(tried: &[(std::path::PathBuf, io::Error)], mounted: bool) -> String {
    let paths: Vec<String> = tried
        .iter()
        .map(|(path, error)| format!("{} ({error})", path.display()))
        .collect();
    let denied = tried
        .iter()
        .any(|(_, error)| error.kind() == io::ErrorKind::PermissionDenied);
    let fix = if denied {
        "tracefs is there but this user may not read it: run corobench as root, or let this \
         user read it (`mount -o remount,mode=755 /sys/kernel/tracing`, or a group that may)"
    } else if mounted {
        "tracefs is mounted but has no such event: this kernel was built without system call \
         tracepoints (CONFIG_FTRACE_SYSCALLS)"
    } else {
        "tracefs is not mounted: mount it as root with `mount -t tracefs nodev \
         /sys/kernel/tracing` (corobench does so itself when it runs as root)"
    };
    format!(
        "the raw_syscalls:sys_enter tracepoint was not found in tracefs: {}; {fix}",
        paths.join(", ")
    )
}

/// Mounts tracefs at its usual place; whether that worked.
fn mount_tracefs() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return false;
    }
    // SAFETY: every argument is a NUL-terminated string that outlives the
    // call; a null data pointer is allowed for tracefs.
    let mounted = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            c"/sys/kernel/tracing".as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    mounted == 0
}

/// The counters [`REFUSE_ENV`] names.
fn refused_by_env() -> Vec<KernelCounter> {
    let Ok(value) = std::env::var(REFUSE_ENV) else {
        return Vec::new();
    };
    let names: Vec<&str> = value.split(',').map(str::trim).collect();
    KernelCounter::ALL
        .into_iter()
        .filter(|k| names.contains(&"all") || names.contains(&k.name()))
        .collect()
}

/// Every thread of every live process in group `pgid`.
///
/// # Errors
/// When `pgid` is not a valid group or `/proc` cannot be read.
pub fn group_threads(pgid: impl Into<i64>) -> Result<Vec<i32>, SamplerError> {
    let pgid = crate::sampler::check_group(pgid.into())?;
    let mut reader = ProcReader::new(PROC_ROOT);
    let mut stats = Vec::new();
    GroupScanner::new(pgid).scan(&mut reader, &mut stats)?;
    let (mut all, mut tids) = (Vec::new(), Vec::new());
    for stat in stats.iter().filter(|s| s.is_live()) {
        if reader.list_tids(stat.pid, &mut tids)? {
            all.extend_from_slice(&tids);
        }
    }
    Ok(all)
}

/// This process's threads whose name starts with `prefix` (the load
/// generator's are `corobench-load-N`).
#[must_use]
pub fn own_threads(prefix: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|tid| {
            std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
                .is_ok_and(|name| name.starts_with(prefix))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    /// Runs `work` on a fresh thread with counters attached to it (and
    /// `refused` refused), returning what they counted.
    fn counted(
        refused: &[KernelCounter],
        work: impl FnOnce() + Send + 'static,
    ) -> (KernelCounts, Vec<(KernelCounter, String)>) {
        let (tid_tx, tid_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tid_tx.send(unsafe { libc::gettid() }).unwrap();
            go_rx.recv().unwrap();
            work();
        });
        let tid = tid_rx.recv().unwrap();
        let counters = ThreadCounters::attach_refusing(&[tid], refused);
        go_tx.send(()).unwrap();
        thread.join().unwrap();
        counters.read()
    }

    fn getppid_times(n: usize) {
        for _ in 0..n {
            // SAFETY: getppid has no preconditions and cannot fail.
            std::hint::black_box(unsafe { libc::getppid() });
        }
    }

    #[test]
    fn counts_the_system_calls_a_thread_makes() {
        let (counts, missing) = counted(&[], || getppid_times(10_000));
        if !missing.is_empty() {
            // The kernel refused (an unprivileged container): said, not faked.
            assert!(
                counts.syscalls.is_none() || missing.len() < 3,
                "{missing:?}"
            );
            eprintln!("counters refused here: {missing:?}");
            return;
        }
        let syscalls = counts.syscalls.unwrap();
        // 10,000 getppid plus the channel's futex and the thread's exit.
        assert!((10_000..10_100).contains(&syscalls), "{syscalls}");
        assert_eq!(counts.threads, 1);
    }

    #[test]
    fn threads_created_after_attaching_are_counted_through_inheritance() {
        let (counts, missing) = counted(&[], || {
            let children: Vec<_> = (0..4)
                .map(|_| std::thread::spawn(|| getppid_times(5_000)))
                .collect();
            children.into_iter().for_each(|c| c.join().unwrap());
        });
        if let Some(syscalls) = counts.syscalls {
            // Four children × 5,000, plus clone, mmap, futex and exit calls.
            assert!((20_000..20_400).contains(&syscalls), "{syscalls}");
        } else {
            eprintln!("counters refused here: {missing:?}");
        }
    }

    #[test]
    fn a_refused_counter_is_missing_with_its_reason_and_the_others_count() {
        let (counts, missing) = counted(&[KernelCounter::Syscalls], || getppid_times(100));
        assert_eq!(counts.syscalls, None);
        assert_eq!(
            missing[0],
            (KernelCounter::Syscalls, format!("refused by {REFUSE_ENV}"))
        );
        // The others count unless the kernel refused them too.
        assert_eq!(counts.ctx_switches.is_some(), missing.len() == 1);
    }

    /// The refusal `errno` gets for user `euid` at level `paranoid`.
    fn refusal_of(errno: i32, euid: u32, paranoid: i32) -> String {
        let access = PerfAccess {
            euid,
            paranoid: Some(paranoid),
            allowed_up_to: 1,
        };
        refusal_given(&io::Error::from_raw_os_error(errno), &access)
    }

    #[test]
    fn a_refusal_says_what_would_let_the_kernel_count() {
        let denied = refusal_of(libc::EACCES, 1000, 2);
        assert!(
            denied.starts_with("perf_event_open was refused (Permission denied")
                && denied.contains("kernel.perf_event_paranoid is 2")
                && denied.contains("sysctl kernel.perf_event_paranoid=1"),
            "{denied}"
        );
        let absent = refusal(&io::Error::from_raw_os_error(libc::ENOSYS));
        assert!(absent.contains("seccomp"), "{absent}");
    }

    #[test]
    fn a_refusal_of_root_never_advises_running_as_root() {
        let denied = refusal_of(libc::EPERM, 0, 3);
        assert!(
            denied.starts_with("perf_event_open was refused (Operation not permitted")
                && denied.contains("CAP_PERFMON"),
            "{denied}"
        );
        assert!(!denied.contains("run as root"), "{denied}");
        assert!(!denied.contains("sysctl"), "{denied}");
    }

    #[test]
    fn a_tracefs_this_user_may_not_read_is_a_permission_to_give_not_a_mount() {
        let tried = |kind: io::ErrorKind| {
            let path = std::path::PathBuf::from("/sys/kernel/tracing/events/x/id");
            vec![(path, io::Error::from(kind))]
        };
        let denied = tracepoint_missing(&tried(io::ErrorKind::PermissionDenied), true);
        assert!(
            denied.contains("may not read it: run corobench as root, or let this user read it"),
            "{denied}"
        );
        assert!(!denied.contains("mount -t"), "{denied}");
        let unmounted = tracepoint_missing(&tried(io::ErrorKind::NotFound), false);
        assert!(
            unmounted.contains("tracefs is not mounted: mount it"),
            "{unmounted}"
        );
        let no_event = tracepoint_missing(&tried(io::ErrorKind::NotFound), true);
        assert!(
            no_event.contains("CONFIG_FTRACE_SYSCALLS") && !no_event.contains("mount -t"),
            "{no_event}"
        );
    }

    #[test]
    fn too_many_threads_are_refused_with_the_limit() {
        let tids = vec![1; MAX_THREADS + 1];
        let (counts, missing) = ThreadCounters::attach(&tids).read();
        assert_eq!(counts.syscalls, None);
        assert_eq!(missing.len(), 3);
        assert!(missing[0].1.contains("at most 2048"), "{missing:?}");
    }

    #[test]
    fn the_generator_threads_are_found_by_name() {
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        // The thread names itself as it starts: wait until it runs.
        let thread = std::thread::Builder::new()
            .name("corobench-load-7".to_owned())
            .spawn(move || {
                started_tx.send(()).unwrap();
                stop_rx.recv().ok()
            })
            .unwrap();
        started_rx.recv().unwrap();
        let found = own_threads("corobench-load");
        stop_tx.send(()).unwrap();
        thread.join().unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
    }
}
