//! The sampler against a real process group spawned by the test: a shell
//! that keeps one CPU-bound child (`yes`) until told to stop.

use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command};
use std::time::Duration;

use corobench_sampler::{Sampler, SamplerError, snapshot};

/// A process group of two: `sh` (the leader) and a busy `yes`. SIGTERM to the
/// group ends `yes`, and the shell reaps it before exiting, so nothing is
/// left orphaned.
struct BusyGroup {
    shell: Child,
}

impl BusyGroup {
    fn spawn() -> Self {
        let mut command = Command::new("sh");
        command.args([
            "-c",
            // The trap comes first, and the group as a whole is signalled:
            // a SIGTERM to the shell alone that arrived before the trap was
            // set, or before `busy` was, would leave `yes` running in the
            // group, orphaned.
            "exec 2>/dev/null; trap 'kill $busy; wait $busy; exit 0' TERM; \
             yes > /dev/null & busy=$!; wait",
        ]);
        // SAFETY: setpgid is async-signal-safe and touches only the child.
        unsafe {
            command.pre_exec(|| {
                if libc::setpgid(0, 0) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        Self {
            shell: command.spawn().expect("sh must be installed"),
        }
    }

    fn pgid(&self) -> i32 {
        i32::try_from(self.shell.id()).unwrap()
    }

    /// Waits (by count of polls, not by a time limit that could flake) until
    /// the shell has started `yes`.
    fn wait_for_both(&self) {
        for _ in 0..500 {
            if snapshot(self.pgid()).is_ok_and(|s| s.processes == 2) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the shell never started its busy child");
    }
}

impl Drop for BusyGroup {
    fn drop(&mut self) {
        // Once reaped, the pid may belong to someone else: never signal it then.
        if matches!(self.shell.try_wait(), Ok(None)) {
            // SAFETY: kill with a pid we spawned and have not reaped yet.
            unsafe { libc::kill(-(self.shell.id() as libc::pid_t), libc::SIGTERM) };
            let _ = self.shell.wait();
        }
    }
}

#[test]
fn samples_a_busy_group() {
    let group = BusyGroup::spawn();
    group.wait_for_both();
    let before = snapshot(group.pgid()).unwrap();
    assert_eq!(before.processes, 2);
    assert!(before.pids.contains(&group.pgid()));
    assert!(before.threads >= 2 && before.rss_bytes > 0);

    let sampler = Sampler::start(group.pgid(), Duration::from_millis(20)).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let series = sampler.stop().unwrap();

    assert!(!series.target_vanished);
    assert!(!series.samples.is_empty());
    assert_eq!(series.summary.samples as usize, series.samples.len());
    assert!(series.summary.cpu_pct_mean > 0.0, "{:?}", series.summary);
    assert_eq!(series.summary.processes_peak, 2);
    assert!(series.summary.rss_peak_bytes > 0);
    let times: Vec<u64> = series.samples.iter().map(|s| s.t_ms).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
}

#[test]
fn a_busy_group_has_the_run_time_of_its_threads_in_every_sample() {
    if !std::path::Path::new("/proc/self/schedstat").is_file() {
        eprintln!("this kernel keeps no schedstat: nothing to check");
        return;
    }
    let group = BusyGroup::spawn();
    group.wait_for_both();
    let sampler = Sampler::start(group.pgid(), Duration::from_millis(20)).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let series = sampler.stop().unwrap();
    let run: Vec<Option<f64>> = series.samples.iter().map(|s| s.cpu_run_pct).collect();
    assert!(run.iter().all(Option::is_some), "{run:?}");
    // `yes` ran: its run time, like its ticks, is more than none.
    assert!(run.iter().flatten().sum::<f64>() > 0.0, "{run:?}");
}

#[test]
fn a_stream_hands_over_each_sample_and_keeps_none() {
    let group = BusyGroup::spawn();
    group.wait_for_both();
    let (sampler, samples) = Sampler::stream(group.pgid(), Duration::from_millis(10)).unwrap();
    let first = samples.recv().expect("a sample arrives");
    let second = samples.recv().expect("and another");
    assert!(first.t_ms <= second.t_ms);
    assert_eq!(first.processes, 2);
    let series = sampler.stop().unwrap();
    assert!(series.samples.is_empty());
}

#[test]
fn a_vanished_group_ends_the_series() {
    let mut group = BusyGroup::spawn();
    group.wait_for_both();
    let sampler = Sampler::start(group.pgid(), Duration::from_millis(5)).unwrap();
    // SAFETY: kill with a pid we spawned and have not reaped yet.
    unsafe { libc::kill(-group.pgid(), libc::SIGTERM) };
    group.shell.wait().unwrap();
    // The thread notices by itself; poll by count until it does.
    for _ in 0..6000 {
        if sampler.is_finished() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(sampler.is_finished());
    let series = sampler.stop().unwrap();
    assert!(series.target_vanished);
    assert!(matches!(
        snapshot(group.pgid()),
        Err(SamplerError::GroupEmpty { .. })
    ));
}

#[test]
fn bad_arguments_are_errors() {
    // Group 0 (kernel threads), no negative pid, nothing above pid_t.
    for given in [0, -5, i64::from(u32::MAX)] {
        let error = Sampler::start(given, Duration::from_millis(100)).unwrap_err();
        assert!(
            matches!(error, SamplerError::InvalidGroup { pgid } if pgid == given),
            "{error}"
        );
    }
    assert!(matches!(
        snapshot(u32::MAX),
        Err(SamplerError::InvalidGroup { .. })
    ));
    let own_group = {
        // SAFETY: getpgrp has no preconditions.
        unsafe { libc::getpgrp() }
    };
    let error = Sampler::start(own_group, Duration::ZERO).unwrap_err();
    assert!(error.to_string().contains("at least 1 ms"), "{error}");
    // No process has pid_max as its group: pids stay below it.
    let pid_max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let error = Sampler::start(pid_max, Duration::from_millis(100)).unwrap_err();
    assert!(matches!(error, SamplerError::GroupEmpty { .. }), "{error}");
    assert!(error.to_string().contains("no live processes"));
}
