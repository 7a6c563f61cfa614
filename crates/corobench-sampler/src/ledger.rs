//! Per-process bookkeeping that turns cumulative `/proc` counters of a
//! changing set of processes into per-interval usage of the whole tree.

use std::collections::HashMap;

use corobench_target::procfs::{CtxSwitches, ProcStat};

/// One member of the group as read in one sampling round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MemberReading {
    pub stat: ProcStat,
    /// Every thread that could be read.
    pub threads: Vec<ThreadReading>,
}

/// One thread as read in one sampling round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ThreadReading {
    pub tid: i32,
    pub ctx: CtxSwitches,
    /// Its run time so far (`schedstat`), where that was read.
    pub run_ns: Option<u64>,
}

/// What the tree used between two rounds, and its size at the later one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct IntervalUsage {
    pub user_ticks: u64,
    pub system_ticks: u64,
    pub ctx: CtxSwitches,
    /// The threads' run time (`schedstat`); `None` where a thread's was not
    /// read. A thread that exits takes its run time since the previous
    /// round with it, and one that lives less than a round is not seen.
    pub run_ns: Option<u64>,
    pub rss_bytes: u64,
    pub threads: u32,
    /// Live (not zombie) processes.
    pub processes: u32,
}

impl IntervalUsage {
    /// `self` followed by `later`: counters add up, levels are the later ones.
    pub(crate) fn then(self, later: Self) -> Self {
        let mut ctx = self.ctx;
        ctx.add(later.ctx);
        Self {
            user_ticks: self.user_ticks + later.user_ticks,
            system_ticks: self.system_ticks + later.system_ticks,
            ctx,
            run_ns: self.run_ns.zip(later.run_ns).map(|(a, b)| a + b),
            ..later
        }
    }
}

/// Counters of one process as last seen.
#[derive(Debug)]
struct Tracked {
    starttime_ticks: u64,
    user_ticks: u64,
    system_ticks: u64,
    /// Thread id → (its counts, the round it was last seen in).
    threads: HashMap<i32, (ThreadReading, u64)>,
    last_round: u64,
}

/// Remembers every member's counters so each round yields deltas.
///
/// Deltas are taken per process, never as a difference of tree totals, so a
/// process that exits cannot make a delta negative: it simply stops
/// contributing, its usage up to its last reading already counted (what it
/// used after that reading is lost, at most one interval of one process).
/// The same holds for threads and their context switches.
///
/// A process seen for the first time is charged from zero if it started
/// after the window began: everything it used was used inside the window,
/// and most of it since the previous round (a worker forked under load). A
/// process that started before the window is charged from its values at
/// first sight, because its earlier usage belongs to the time before
/// measuring (start-up, warm-up) and charging it would show a spike that
/// never happened.
#[derive(Debug)]
pub(crate) struct TreeLedger {
    window_start_boot_ticks: u64,
    page_size_bytes: u64,
    processes: HashMap<i32, Tracked>,
    rounds: u64,
}

impl TreeLedger {
    pub(crate) fn new(window_start_boot_ticks: u64, page_size_bytes: u64) -> Self {
        Self {
            window_start_boot_ticks,
            page_size_bytes,
            processes: HashMap::new(),
            rounds: 0,
        }
    }

    /// Accounts one round of readings and returns the usage since the
    /// previous round (the first round's usage is only a baseline).
    pub(crate) fn account(&mut self, readings: &[MemberReading]) -> IntervalUsage {
        self.rounds += 1;
        let mut usage = IntervalUsage {
            run_ns: Some(0),
            ..IntervalUsage::default()
        };
        for reading in readings {
            self.account_process(reading, &mut usage);
            if reading.stat.is_live() {
                usage.processes += 1;
                usage.threads += reading.stat.num_threads;
                usage.rss_bytes += reading.stat.rss_pages * self.page_size_bytes;
            }
        }
        let round = self.rounds;
        self.processes.retain(|_, p| p.last_round == round);
        usage
    }

    fn account_process(&mut self, reading: &MemberReading, usage: &mut IntervalUsage) {
        let stat = &reading.stat;
        let known = self
            .processes
            .get(&stat.pid)
            .is_some_and(|p| p.starttime_ticks == stat.starttime_ticks);
        if !known {
            // A new process, or a pid reused by one: start its ledger.
            let baseline = self.first_sight_baseline(reading);
            self.processes.insert(stat.pid, baseline);
        }
        let tracked = self
            .processes
            .get_mut(&stat.pid)
            .expect("inserted above when unknown");
        usage.user_ticks += stat.utime_ticks.saturating_sub(tracked.user_ticks);
        usage.system_ticks += stat.stime_ticks.saturating_sub(tracked.system_ticks);
        tracked.user_ticks = stat.utime_ticks;
        tracked.system_ticks = stat.stime_ticks;
        tracked.last_round = self.rounds;
        account_threads(tracked, &reading.threads, self.rounds, usage);
    }

    fn first_sight_baseline(&self, reading: &MemberReading) -> Tracked {
        let stat = &reading.stat;
        let started_in_window = stat.starttime_ticks > self.window_start_boot_ticks;
        let threads = if started_in_window {
            HashMap::new()
        } else {
            reading
                .threads
                .iter()
                .map(|&thread| (thread.tid, (thread, self.rounds)))
                .collect()
        };
        Tracked {
            starttime_ticks: stat.starttime_ticks,
            user_ticks: if started_in_window {
                0
            } else {
                stat.utime_ticks
            },
            system_ticks: if started_in_window {
                0
            } else {
                stat.stime_ticks
            },
            threads,
            last_round: self.rounds,
        }
    }
}

/// Context switches and run time of a process's threads since the
/// previous round. A thread not seen before in a known process was created
/// since the previous round, so all it did belongs to this interval.
fn account_threads(
    tracked: &mut Tracked,
    threads: &[ThreadReading],
    round: u64,
    usage: &mut IntervalUsage,
) {
    for &now in threads {
        let born = ThreadReading {
            tid: now.tid,
            ctx: CtxSwitches::default(),
            run_ns: Some(0),
        };
        let entry = tracked.threads.entry(now.tid).or_insert((born, round));
        usage.ctx.add(now.ctx.since(entry.0.ctx));
        let ran = now
            .run_ns
            .zip(entry.0.run_ns)
            .map(|(n, e)| n.saturating_sub(e));
        usage.run_ns = usage.run_ns.zip(ran).map(|(sum, ran)| sum + ran);
        *entry = (now, round);
    }
    tracked.threads.retain(|_, (_, seen)| *seen == round);
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW_START: u64 = 1_000;
    const PAGE: u64 = 4096;

    fn member(pid: i32, starttime: u64, utime: u64, stime: u64) -> MemberReading {
        MemberReading {
            stat: ProcStat {
                pid,
                state: 'S',
                ppid: 1,
                pgrp: 100,
                utime_ticks: utime,
                stime_ticks: stime,
                num_threads: 1,
                starttime_ticks: starttime,
                rss_pages: 10,
            },
            threads: vec![thread(pid, ctx(0, 0))],
        }
    }

    fn thread(tid: i32, ctx: CtxSwitches) -> ThreadReading {
        ThreadReading {
            tid,
            ctx,
            run_ns: None,
        }
    }

    fn ctx(voluntary: u64, involuntary: u64) -> CtxSwitches {
        CtxSwitches {
            voluntary,
            involuntary,
        }
    }

    fn ledger() -> TreeLedger {
        TreeLedger::new(WINDOW_START, PAGE)
    }

    #[test]
    fn deltas_of_known_processes() {
        let mut ledger = ledger();
        ledger.account(&[member(100, 500, 40, 10), member(101, 600, 5, 5)]);
        let usage = ledger.account(&[member(100, 500, 47, 12), member(101, 600, 6, 5)]);
        assert_eq!((usage.user_ticks, usage.system_ticks), (8, 2));
        assert_eq!((usage.processes, usage.threads), (2, 2));
        assert_eq!(usage.rss_bytes, 2 * 10 * PAGE);
    }

    #[test]
    fn an_exiting_process_never_makes_a_delta_negative() {
        let mut ledger = ledger();
        ledger.account(&[member(100, 500, 40, 10), member(101, 600, 500, 500)]);
        // 101 exits: the tree total drops by 1000 ticks, the delta must not.
        let usage = ledger.account(&[member(100, 500, 43, 10)]);
        assert_eq!((usage.user_ticks, usage.system_ticks), (3, 0));
        assert_eq!(usage.processes, 1);
    }

    #[test]
    fn a_process_born_in_the_window_is_charged_from_zero() {
        let mut ledger = ledger();
        ledger.account(&[member(100, 500, 40, 10)]);
        let usage = ledger.account(&[
            member(100, 500, 40, 10),
            member(102, WINDOW_START + 5, 7, 3),
        ]);
        assert_eq!((usage.user_ticks, usage.system_ticks), (7, 3));
    }

    #[test]
    fn a_process_older_than_the_window_is_charged_from_first_sight() {
        let mut ledger = ledger();
        ledger.account(&[member(100, 500, 40, 10)]);
        // 103 existed before the window but shows up only now.
        let usage = ledger.account(&[member(100, 500, 40, 10), member(103, 900, 700, 300)]);
        assert_eq!((usage.user_ticks, usage.system_ticks), (0, 0));
        let usage = ledger.account(&[member(100, 500, 40, 10), member(103, 900, 702, 300)]);
        assert_eq!(usage.user_ticks, 2);
    }

    #[test]
    fn a_reused_pid_is_a_new_process() {
        let mut ledger = ledger();
        ledger.account(&[member(100, 500, 40, 10), member(104, 600, 900, 900)]);
        // 104 exited and its pid went to a new worker with less CPU.
        let usage = ledger.account(&[
            member(100, 500, 40, 10),
            member(104, WINDOW_START + 9, 2, 1),
        ]);
        assert_eq!((usage.user_ticks, usage.system_ticks), (2, 1));
    }

    #[test]
    fn a_zombie_adds_its_last_cpu_but_is_not_live() {
        let mut ledger = ledger();
        ledger.account(&[member(100, 500, 40, 10), member(105, 600, 10, 10)]);
        let mut zombie = member(105, 600, 14, 11);
        zombie.stat.state = 'Z';
        zombie.stat.rss_pages = 0;
        let usage = ledger.account(&[member(100, 500, 40, 10), zombie]);
        assert_eq!((usage.user_ticks, usage.system_ticks), (4, 1));
        assert_eq!((usage.processes, usage.threads), (1, 1));
        assert_eq!(usage.rss_bytes, 10 * PAGE);
    }

    #[test]
    fn context_switches_are_summed_over_threads() {
        let mut ledger = ledger();
        let mut first = member(100, 500, 0, 0);
        first.threads = vec![thread(100, ctx(10, 1)), thread(110, ctx(50, 5))];
        ledger.account(&[first]);
        let mut second = member(100, 500, 0, 0);
        // 110 exited, 111 was created since the previous round.
        second.threads = vec![thread(100, ctx(12, 1)), thread(111, ctx(4, 2))];
        let usage = ledger.account(&[second]);
        assert_eq!(usage.ctx, ctx(2 + 4, 2));
        let mut third = member(100, 500, 0, 0);
        third.threads = vec![thread(100, ctx(12, 1)), thread(111, ctx(4, 2))];
        assert_eq!(ledger.account(&[third]).ctx, ctx(0, 0));
    }

    #[test]
    fn run_time_is_summed_over_threads_from_zero_for_the_newborn() {
        let timed = |tid, run_ns| ThreadReading {
            tid,
            ctx: ctx(0, 0),
            run_ns: Some(run_ns),
        };
        let mut ledger = ledger();
        let mut first = member(100, 500, 0, 0);
        first.threads = vec![timed(100, 5_000_000), timed(110, 9_000_000)];
        assert_eq!(ledger.account(&[first]).run_ns, Some(0));
        let mut second = member(100, 500, 0, 0);
        // 110 ran 1 ms more; 111 was born and ran 0.3 ms.
        second.threads = vec![
            timed(100, 5_000_000),
            timed(110, 10_000_000),
            timed(111, 300_000),
        ];
        assert_eq!(ledger.account(&[second]).run_ns, Some(1_300_000));
        // A thread whose run time was not read leaves the total unknown.
        let mut third = member(100, 500, 0, 0);
        third.threads = vec![timed(100, 5_000_000), thread(110, ctx(0, 0))];
        assert_eq!(ledger.account(&[third]).run_ns, None);
    }

    #[test]
    fn usage_then_adds_counters_and_keeps_the_later_levels() {
        let early = IntervalUsage {
            user_ticks: 1,
            system_ticks: 2,
            ctx: ctx(3, 4),
            run_ns: Some(7),
            rss_bytes: 100,
            threads: 5,
            processes: 2,
        };
        let late = IntervalUsage {
            user_ticks: 10,
            system_ticks: 20,
            ctx: ctx(30, 40),
            run_ns: Some(70),
            rss_bytes: 200,
            threads: 6,
            processes: 3,
        };
        let both = early.then(late);
        assert_eq!(
            (both.user_ticks, both.system_ticks, both.ctx, both.run_ns),
            (11, 22, ctx(33, 44), Some(77))
        );
        assert_eq!((both.rss_bytes, both.threads, both.processes), (200, 6, 3));
    }
}
