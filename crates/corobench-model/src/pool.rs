//! What a target's database pool says of itself: the optional `pool` object
//! of its `/stats` (docs/contract.md), read before a trial's load and after
//! it, and the figures made of the difference (connection reuse, checkouts
//! that waited, the mean wait for a connection).

use serde::{Deserialize, Serialize};

use crate::analysis::{Better, MetricUnit};
use crate::run::TrialRecord;

/// One reading of `/stats`'s `pool`; `None` where the pool library cannot
/// say. The counters (`acquires` onward) count since the pool was created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PoolCounters {
    pub max: Option<u64>,
    pub open: Option<u64>,
    pub idle: Option<u64>,
    pub waiting: Option<u64>,
    pub acquires: Option<u64>,
    pub new_connections: Option<u64>,
    pub empty_acquires: Option<u64>,
    pub acquire_wait_us: Option<u64>,
}

/// The pool before a trial's load (warm-up included) and once it is over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolWindow {
    pub before: PoolCounters,
    pub after: PoolCounters,
}

impl PoolWindow {
    /// How much a counter grew over the window; `None` when either reading
    /// lacks it, or it went down (the pool was recreated).
    fn grew(&self, counter: fn(&PoolCounters) -> Option<u64>) -> Option<u64> {
        counter(&self.after)?.checked_sub(counter(&self.before)?)
    }

    /// Checkouts over the window; `None` when there were none.
    fn acquires(&self) -> Option<f64> {
        self.grew(|c| c.acquires)
            .filter(|n| *n > 0)
            .map(|n| n as f64)
    }
}

/// A figure of the pool over a trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PoolFigure {
    /// 1 − new connections / checkouts: the share of checkouts that found a
    /// connection already open.
    Reuse,
    /// Checkouts that found no idle connection / checkouts.
    Waits,
    /// The mean time a checkout took, µs.
    AcquireWait,
}

impl PoolFigure {
    pub const ALL: [Self; 3] = [Self::Reuse, Self::Waits, Self::AcquireWait];

    /// The stable identifier used in JSON and CSV.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::Reuse => "pool_reuse",
            Self::Waits => "pool_waits",
            Self::AcquireWait => "pool_acquire_wait_us",
        }
    }

    /// The word a claim names it by.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            Self::Reuse => "pool_reuse",
            Self::Waits => "pool_waits",
            Self::AcquireWait => "pool_wait",
        }
    }

    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Reuse => "pool reuse",
            Self::Waits => "pool waits",
            Self::AcquireWait => "pool wait",
        }
    }

    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Self::Reuse => {
                "connection reuse: 1 − new connections / checkouts of the database pool, as the pool counts them"
            }
            Self::Waits => {
                "checkouts of the database pool that found no idle connection, over all checkouts"
            }
            Self::AcquireWait => "mean time a checkout of the database pool took",
        }
    }

    #[must_use]
    pub fn unit(self) -> MetricUnit {
        match self {
            Self::Reuse | Self::Waits => MetricUnit::Fraction,
            Self::AcquireWait => MetricUnit::Microseconds,
        }
    }

    /// More reuse is better; waits are a cost.
    #[must_use]
    pub fn better(self) -> Better {
        match self {
            Self::Reuse => Better::Higher,
            Self::Waits | Self::AcquireWait => Better::Lower,
        }
    }

    /// The figure over `trial`'s window; `None` without pool counters, or
    /// without a single checkout.
    #[must_use]
    pub fn value(self, trial: &TrialRecord) -> Option<f64> {
        let window = trial.pool.as_ref()?;
        let acquires = window.acquires()?;
        match self {
            Self::Reuse => {
                let new = window.grew(|c| c.new_connections)? as f64;
                Some((1.0 - new / acquires).max(0.0))
            }
            Self::Waits => Some(window.grew(|c| c.empty_acquires)? as f64 / acquires),
            Self::AcquireWait => Some(window.grew(|c| c.acquire_wait_us)? as f64 / acquires),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(acquires: u64, new: u64, empty: Option<u64>, wait_us: Option<u64>) -> PoolCounters {
        PoolCounters {
            acquires: Some(acquires),
            new_connections: Some(new),
            empty_acquires: empty,
            acquire_wait_us: wait_us,
            ..PoolCounters::default()
        }
    }

    fn trial(before: PoolCounters, after: PoolCounters) -> TrialRecord {
        let mut trial = TrialRecord::started(0, 0, 0, 0);
        trial.status = crate::run::TrialStatus::Ok;
        trial.pool = Some(PoolWindow { before, after });
        trial
    }

    #[test]
    fn figures_are_taken_over_the_window() {
        let t = trial(
            counters(100, 10, Some(5), Some(1_000)),
            counters(1_100, 60, Some(205), Some(41_000)),
        );
        assert_eq!(PoolFigure::Reuse.value(&t), Some(0.95));
        assert_eq!(PoolFigure::Waits.value(&t), Some(0.2));
        assert_eq!(PoolFigure::AcquireWait.value(&t), Some(40.0));
    }

    #[test]
    fn what_the_pool_cannot_say_or_did_not_do_is_no_figure() {
        let node = trial(counters(0, 0, None, None), counters(500, 10, None, None));
        assert_eq!(PoolFigure::Reuse.value(&node), Some(0.98));
        assert_eq!(PoolFigure::Waits.value(&node), None);
        assert_eq!(PoolFigure::AcquireWait.value(&node), None);
        let idle = trial(counters(7, 1, None, None), counters(7, 1, None, None));
        assert_eq!(PoolFigure::Reuse.value(&idle), None);
        let recreated = trial(counters(70, 5, None, None), counters(7, 1, None, None));
        assert_eq!(PoolFigure::Reuse.value(&recreated), None);
        assert_eq!(
            PoolFigure::Reuse.value(&TrialRecord::started(0, 0, 0, 0)),
            None
        );
    }
}
