//! Kernel counters on real processes: a shell that forks a worker after the
//! counters were attached is counted with its worker, through inheritance.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use corobench_sampler::{ThreadCounters, group_threads};

/// `dd` copying one byte at a time makes one read and one write per byte.
const BYTES: u64 = 20_000;

#[test]
fn a_worker_forked_after_attaching_is_counted_through_inheritance() {
    let mut shell = Command::new("sh")
        .args([
            "-c",
            &format!("read go; dd if=/dev/zero of=/dev/null bs=1 count={BYTES} 2>/dev/null"),
        ])
        .stdin(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("sh starts");
    let tids = group_threads(shell.id()).unwrap();
    assert_eq!(tids.len(), 1, "only the shell exists yet: {tids:?}");
    let counters = ThreadCounters::attach(&tids);
    // The shell forks and execs dd only now.
    shell.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert!(shell.wait().unwrap().success());
    let (counts, missing) = counters.read();
    assert!(missing.is_empty(), "refused here: {missing:?}");
    let syscalls = counts.syscalls.unwrap();
    // 2 × BYTES from dd's loop; the rest is the shell's read, fork and wait
    // and dd's exec, dynamic loading and exit: a few hundred at most.
    assert!(
        (2 * BYTES..2 * BYTES + 1_000).contains(&syscalls),
        "{syscalls} system calls"
    );
    // dd faulted in its own pages: a child's faults are counted too.
    assert!(counts.minor_faults.unwrap() > 0);
}
