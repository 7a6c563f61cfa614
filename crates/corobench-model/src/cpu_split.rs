//! When the server's user/system CPU split means something.
//!
//! `/proc/PID/stat` gives a process's user and system CPU in clock ticks
//! (`USER_HZ`, 100 a second on every Linux ABI): at each tick the kernel
//! charges the tick to the mode it interrupted, and it scales the two so
//! that they add up to the process's run time. The total is therefore as
//! good as the run time (to a tick or two), but the split is a sample of a
//! few ticks: where a window holds two ticks, both may land in user mode in
//! one trial and in system mode in the next, so the same program shows
//! `user 222 / sys 0.00` beside `user 0.00 / sys 111` µs per request.
//!
//! The rule: a part (user or system) is shown for a scenario only where
//! its median trial (of those that succeeded) spans at least
//! [`MIN_SPLIT_TICKS`] ticks, the median being the figure a scenario shows
//! (a count of 20 is uncertain by about ±1/√20, 22%). Where either part is
//! below, the scenario shows the total per request too
//! ([`PerRequest::SERVER_CPU`]), with the part that passes, if one does.
//! The ticks are read back from the stored shares of a core and the
//! window's length, so the rule applies to runs stored before it.

use crate::analysis::Metric;
use crate::counters::{Cost, PerRequest};
use crate::run::{TrialRecord, TrialStatus};

/// Clock ticks per second of `/proc`'s CPU times (`USER_HZ`).
pub const USER_HZ: f64 = 100.0;

/// The fewest ticks a part of the split must span in the median trial to be shown.
pub const MIN_SPLIT_TICKS: f64 = 20.0;

/// Which of the server's CPU figures a scenario shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuSplit {
    /// User CPU per request spans enough ticks in the median trial.
    pub user: bool,
    /// System CPU per request spans enough ticks in the median trial.
    pub system: bool,
}

impl CpuSplit {
    /// The split of a scenario whose trials are `trials` (only those that
    /// succeeded and were sampled count).
    #[must_use]
    pub fn of(trials: &[&TrialRecord]) -> Self {
        let resolved =
            |cost: Cost| median_ticks(trials, cost).is_none_or(|ticks| ticks >= MIN_SPLIT_TICKS);
        Self {
            user: resolved(Cost::UserCpu),
            system: resolved(Cost::SystemCpu),
        }
    }

    /// Whether the total is shown: a part is below the ticks' resolution.
    #[must_use]
    pub fn total(self) -> bool {
        !(self.user && self.system)
    }

    /// Whether the scenario shows `metric` (every metric but the server's
    /// CPU figures is shown as measured).
    #[must_use]
    pub fn shows(self, metric: Metric) -> bool {
        match metric {
            Metric::PerRequest(m) if m == PerRequest::server(Cost::UserCpu) => self.user,
            Metric::PerRequest(m) if m == PerRequest::server(Cost::SystemCpu) => self.system,
            Metric::PerRequest(m) if m == PerRequest::SERVER_CPU => self.total(),
            _ => true,
        }
    }

    /// The parts below the ticks' resolution.
    #[must_use]
    pub fn hidden(self) -> Vec<Metric> {
        [(self.user, Cost::UserCpu), (self.system, Cost::SystemCpu)]
            .into_iter()
            .filter(|(shown, _)| !shown)
            .map(|(_, cost)| Metric::PerRequest(PerRequest::server(cost)))
            .collect()
    }
}

/// The median over `trials` that succeeded of the ticks the server's part
/// `cost` spanned; `None` where none was sampled.
#[must_use]
pub fn median_ticks(trials: &[&TrialRecord], cost: Cost) -> Option<f64> {
    let mut ticks: Vec<f64> = trials
        .iter()
        .filter(|t| t.status == TrialStatus::Ok)
        .filter_map(|t| server_ticks(t, cost))
        .collect();
    ticks.sort_by(f64::total_cmp);
    let middle = ticks.len() / 2;
    match ticks.len() {
        0 => None,
        n if n % 2 == 1 => Some(ticks[middle]),
        _ => Some((ticks[middle - 1] + ticks[middle]) / 2.0),
    }
}

/// The clock ticks the server's part `cost` (user or system CPU) spanned
/// over `trial`'s window, rounded; `None` where it was not sampled.
#[must_use]
pub fn server_ticks(trial: &TrialRecord, cost: Cost) -> Option<f64> {
    let resources = trial.resources.as_ref().filter(|r| r.samples > 0)?;
    let load = trial.load.as_ref()?;
    let pct = match cost {
        Cost::UserCpu => resources.cpu_user_pct_mean,
        Cost::SystemCpu => resources.cpu_system_pct_mean,
        _ => return None,
    };
    let ticks = pct / 100.0 * load.elapsed_s * USER_HZ;
    ticks.is_finite().then(|| ticks.round())
}
