//! What a request costs the kernel and the scheduler: counts the kernel kept
//! for the server's process tree and for the generator's threads over a
//! trial's measured window, and the metrics made of them (per request).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::analysis::MetricUnit;
use crate::run::TrialRecord;

/// Whose bill a count is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The target's whole process tree.
    Server,
    /// The load generator's own threads.
    Generator,
}

/// A count the kernel keeps per task, read through `perf_event_open`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelCounter {
    /// System calls entered (the `raw_syscalls:sys_enter` tracepoint).
    Syscalls,
    /// Context switches, voluntary and involuntary together.
    ContextSwitches,
    /// Minor page faults.
    MinorFaults,
}

impl KernelCounter {
    pub const ALL: [Self; 3] = [Self::Syscalls, Self::ContextSwitches, Self::MinorFaults];

    /// The name a user writes to refuse it (`COROBENCH_REFUSE_COUNTERS`)
    /// and the one a warning names it by.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Syscalls => "syscalls",
            Self::ContextSwitches => "ctx_switches",
            Self::MinorFaults => "minor_faults",
        }
    }
}

impl fmt::Display for KernelCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Counts over the measured window; `None` where the counter could not be
/// opened (the trial's [`TrialCounters::missing`] says why).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelCounts {
    pub syscalls: Option<u64>,
    pub ctx_switches: Option<u64>,
    pub minor_faults: Option<u64>,
    /// Threads the counters were attached to when the window opened (each
    /// with inheritance, so what they created later is counted too).
    pub threads: u32,
}

impl KernelCounts {
    /// The count of `counter`, when it was kept.
    #[must_use]
    pub fn get(&self, counter: KernelCounter) -> Option<u64> {
        match counter {
            KernelCounter::Syscalls => self.syscalls,
            KernelCounter::ContextSwitches => self.ctx_switches,
            KernelCounter::MinorFaults => self.minor_faults,
        }
    }

    /// The counts of two sets of threads together; a kind either lacks is
    /// lacking.
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        let mut sum = Self {
            threads: self.threads + other.threads,
            ..Self::default()
        };
        for counter in KernelCounter::ALL {
            let both = self.get(counter).zip(other.get(counter));
            sum.set(counter, both.map(|(a, b)| a + b));
        }
        sum
    }

    /// Sets the count of `counter`.
    pub fn set(&mut self, counter: KernelCounter, value: Option<u64>) {
        match counter {
            KernelCounter::Syscalls => self.syscalls = value,
            KernelCounter::ContextSwitches => self.ctx_switches = value,
            KernelCounter::MinorFaults => self.minor_faults = value,
        }
    }
}

/// A counter the kernel or the permissions refused, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissingCounter {
    pub side: Side,
    pub counter: KernelCounter,
    pub reason: String,
}

/// One side's counts over its span, as a host measured and sent them:
/// `corobench load --json` for the generator, `corobench serve` for the
/// server. The coordinator joins the sides into a trial's [`TrialCounters`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideCounters {
    pub counts: KernelCounts,
    /// The counters that could not be kept, each with the reason.
    pub missing: Vec<MissingCounter>,
    /// Responses completed while they counted (the generator's side only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses: Option<u64>,
}

impl SideCounters {
    /// What `side`'s counters read: the counts, and each kind that is
    /// missing with the reason.
    #[must_use]
    pub fn of(side: Side, (counts, missing): (KernelCounts, Vec<(KernelCounter, String)>)) -> Self {
        Self {
            counts,
            missing: missing
                .into_iter()
                .map(|(counter, reason)| MissingCounter {
                    side,
                    counter,
                    reason,
                })
                .collect(),
            responses: None,
        }
    }

    /// Every counter of `side` missing, for one reason.
    #[must_use]
    pub fn refused(side: Side, reason: &str) -> Self {
        let missing = KernelCounter::ALL.map(|k| (k, reason.to_owned()));
        Self::of(side, (KernelCounts::default(), missing.to_vec()))
    }
}

/// The kernel counters of one trial.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialCounters {
    pub server: KernelCounts,
    pub generator: KernelCounts,
    /// The counters that could not be kept, each with the reason.
    pub missing: Vec<MissingCounter>,
    /// Responses the generator completed while the counters counted: the
    /// divisor of their per-request figures. The counters open and close
    /// a moment after the load's own window (when the runner sees it
    /// open), so its requests would not be the same span's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses: Option<u64>,
}

impl TrialCounters {
    #[must_use]
    pub fn side(&self, side: Side) -> &KernelCounts {
        match side {
            Side::Server => &self.server,
            Side::Generator => &self.generator,
        }
    }
}

/// What a request costs, per side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cost {
    Syscalls,
    ContextSwitches,
    /// User CPU time, from `/proc` (the server's) or the generator's own threads.
    UserCpu,
    /// System CPU time, likewise.
    SystemCpu,
    MinorFaults,
    /// User and system CPU time together: for the server, where its split
    /// is below the clock ticks' resolution ([`crate::cpu_split`]).
    Cpu,
}

/// A per-request cost of one side: `syscalls/req`, `gen sys µs/req`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PerRequest {
    pub side: Side,
    pub cost: Cost,
}

impl PerRequest {
    /// Every per-request metric, server first, in report order.
    pub const ALL: [Self; 10] = [
        Self::server(Cost::Syscalls),
        Self::server(Cost::ContextSwitches),
        Self::server(Cost::UserCpu),
        Self::server(Cost::SystemCpu),
        Self::server(Cost::MinorFaults),
        Self::generator(Cost::Syscalls),
        Self::generator(Cost::ContextSwitches),
        Self::generator(Cost::UserCpu),
        Self::generator(Cost::SystemCpu),
        Self::generator(Cost::MinorFaults),
    ];

    /// The server's CPU time per request, split or not: shown only in the
    /// scenarios whose split is below the ticks' resolution, so it is not
    /// in [`PerRequest::ALL`] but follows the scenarios that have it.
    pub const SERVER_CPU: Self = Self::server(Cost::Cpu);

    #[must_use]
    pub const fn server(cost: Cost) -> Self {
        Self {
            side: Side::Server,
            cost,
        }
    }

    #[must_use]
    pub const fn generator(cost: Cost) -> Self {
        Self {
            side: Side::Generator,
            cost,
        }
    }

    /// The kernel counter behind this cost; `None` for the CPU split,
    /// which comes from `/proc`.
    #[must_use]
    pub fn counter(self) -> Option<KernelCounter> {
        match self.cost {
            Cost::Syscalls => Some(KernelCounter::Syscalls),
            Cost::ContextSwitches => Some(KernelCounter::ContextSwitches),
            Cost::MinorFaults => Some(KernelCounter::MinorFaults),
            Cost::UserCpu | Cost::SystemCpu | Cost::Cpu => None,
        }
    }

    /// Stable identifier in JSON and CSV: `server_syscalls_per_req`.
    #[must_use]
    pub fn id(self) -> &'static str {
        self.pick(ID)
    }

    /// Column heading, named by its unit: `syscalls/req`, `gen user µs/req`.
    #[must_use]
    pub fn label(self) -> &'static str {
        self.pick(LABEL)
    }

    /// The word a claim or a `--fail-on` rule names it by: `syscalls`, `gen_sys_us`.
    #[must_use]
    pub fn word(self) -> &'static str {
        self.pick(WORD)
    }

    /// Unit of the Go benchmark export: `syscalls/op`, `gen-user-ns/op`.
    #[must_use]
    pub fn gobench_unit(self) -> &'static str {
        self.pick(GOBENCH)
    }

    #[must_use]
    pub fn description(self) -> &'static str {
        self.pick(DESCRIPTION)
    }

    #[must_use]
    pub fn unit(self) -> MetricUnit {
        match self.cost {
            Cost::UserCpu | Cost::SystemCpu | Cost::Cpu => MetricUnit::Microseconds,
            _ => MetricUnit::PerRequest,
        }
    }

    fn pick(self, table: [[&'static str; 6]; 2]) -> &'static str {
        let side = match self.side {
            Side::Server => 0,
            Side::Generator => 1,
        };
        let cost = match self.cost {
            Cost::Syscalls => 0,
            Cost::ContextSwitches => 1,
            Cost::UserCpu => 2,
            Cost::SystemCpu => 3,
            Cost::MinorFaults => 4,
            Cost::Cpu => 5,
        };
        table[side][cost]
    }

    /// The cost in one trial: the window's count over its complete
    /// responses. `None` without a load, without a response, or where the
    /// count was not kept.
    #[must_use]
    pub fn value(self, trial: &TrialRecord) -> Option<f64> {
        let load = trial.load.as_ref().filter(|l| l.requests > 0)?;
        let requests = load.requests as f64;
        if let Some(counter) = self.counter() {
            // Divided by the responses of the counters' own span.
            let counters = trial.counters.as_ref()?;
            let count = counters.side(self.side).get(counter)? as f64;
            let responses = counters
                .responses
                .filter(|r| *r > 0)
                .map_or(requests, |r| r as f64);
            return Some(count / responses);
        }
        let cpu_us = match self.side {
            // The sampler's mean share of a core over the window, as time.
            Side::Server => {
                let r = trial.resources.as_ref().filter(|r| r.samples > 0)?;
                let pct = match self.cost {
                    Cost::UserCpu => r.cpu_user_pct_mean,
                    Cost::SystemCpu => r.cpu_system_pct_mean,
                    _ => r.cpu_pct_mean,
                };
                pct / 100.0 * load.elapsed_s * 1e6
            }
            Side::Generator => {
                let g = &load.generator;
                let seconds = match self.cost {
                    Cost::UserCpu => g.cpu_user_s,
                    Cost::SystemCpu => g.cpu_system_s,
                    _ => g.cpu_user_s + g.cpu_system_s,
                };
                seconds * 1e6
            }
        };
        Some(cpu_us / requests)
    }
}

const ID: [[&str; 6]; 2] = [
    [
        "server_syscalls_per_req",
        "server_ctx_switches_per_req",
        "server_user_us_per_req",
        "server_sys_us_per_req",
        "server_minor_faults_per_req",
        "server_cpu_us_per_req",
    ],
    [
        "generator_syscalls_per_req",
        "generator_ctx_switches_per_req",
        "generator_user_us_per_req",
        "generator_sys_us_per_req",
        "generator_minor_faults_per_req",
        "generator_cpu_us_per_req",
    ],
];

const LABEL: [[&str; 6]; 2] = [
    [
        "syscalls/req",
        "ctx switches/req",
        "user µs/req",
        "sys µs/req",
        "faults/req",
        "cpu µs/req",
    ],
    [
        "gen syscalls/req",
        "gen ctx switches/req",
        "gen user µs/req",
        "gen sys µs/req",
        "gen faults/req",
        "gen cpu µs/req",
    ],
];

const WORD: [[&str; 6]; 2] = [
    [
        "syscalls",
        "ctx_switches",
        "user_us",
        "sys_us",
        "faults",
        "cpu_us",
    ],
    [
        "gen_syscalls",
        "gen_ctx_switches",
        "gen_user_us",
        "gen_sys_us",
        "gen_faults",
        "gen_cpu_us",
    ],
];

const GOBENCH: [[&str; 6]; 2] = [
    [
        "syscalls/op",
        "ctx-switches/op",
        "user-ns/op",
        "sys-ns/op",
        "faults/op",
        "cpu-ns/op",
    ],
    [
        "gen-syscalls/op",
        "gen-ctx-switches/op",
        "gen-user-ns/op",
        "gen-sys-ns/op",
        "gen-faults/op",
        "gen-cpu-ns/op",
    ],
];

const DESCRIPTION: [[&str; 6]; 2] = [
    [
        "server system calls per request (whole process tree)",
        "server context switches per request, voluntary and involuntary",
        "server user CPU time per request",
        "server system (kernel) CPU time per request",
        "server minor page faults per request",
        "server CPU time per request, user and system together",
    ],
    [
        "generator system calls per request (its own threads)",
        "generator context switches per request",
        "generator user CPU time per request",
        "generator system (kernel) CPU time per request",
        "generator minor page faults per request",
        "generator CPU time per request, user and system together",
    ],
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_named_by_their_unit() {
        let ids: std::collections::BTreeSet<&str> =
            PerRequest::ALL.iter().map(|m| m.id()).collect();
        let words: std::collections::BTreeSet<&str> =
            PerRequest::ALL.iter().map(|m| m.word()).collect();
        assert_eq!((ids.len(), words.len()), (10, 10));
        assert!(PerRequest::ALL.iter().all(|m| m.label().ends_with("/req")));
        assert_eq!(PerRequest::server(Cost::Syscalls).label(), "syscalls/req");
        assert_eq!(
            PerRequest::generator(Cost::SystemCpu).gobench_unit(),
            "gen-sys-ns/op"
        );
    }

    #[test]
    fn the_server_cpu_total_is_named_and_found_by_its_word_and_id() {
        let total = crate::analysis::Metric::SERVER_CPU;
        assert_eq!(total.label(), "cpu µs/req");
        assert_eq!(crate::analysis::Metric::from_word("cpu_us"), Some(total));
        assert_eq!(
            crate::analysis::Metric::from_id("server_cpu_us_per_req"),
            Some(total)
        );
        assert!(!crate::analysis::Metric::ALL.contains(&total));
    }

    #[test]
    fn counts_set_and_get_each_counter() {
        let mut counts = KernelCounts::default();
        for (i, counter) in KernelCounter::ALL.into_iter().enumerate() {
            counts.set(counter, Some(i as u64 + 1));
        }
        assert_eq!(
            (counts.syscalls, counts.ctx_switches, counts.minor_faults),
            (Some(1), Some(2), Some(3))
        );
    }
}
