//! A sampled window: the samples and the figures a report shows.

use corobench_model::cpu_split::USER_HZ;
use corobench_model::{ResourceSample, ResourceSummary};

/// What the sampler saw between `start` and `stop`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceSeries {
    pub samples: Vec<ResourceSample>,
    pub summary: ResourceSummary,
    /// The process group had no live process left before sampling was
    /// stopped: the target exited or crashed, and the series ends there.
    pub target_vanished: bool,
}

impl ResourceSeries {
    #[must_use]
    pub fn new(samples: Vec<ResourceSample>, target_vanished: bool) -> Self {
        let summary = summarize(&samples);
        Self {
            samples,
            summary,
            target_vanished,
        }
    }
}

/// Condenses samples into a summary.
///
/// CPU is a rate, so its mean weighs each sample by the length of its
/// interval (the last interval of a window is usually shorter); that makes
/// the mean equal to the total CPU time over the window's length. Memory,
/// threads and processes are levels read at each sample, averaged or maxed
/// as read.
///
/// The total CPU is the threads' run time where every sample has it
/// ([`total_cpu_pct`]), else user + system.
#[must_use]
pub fn summarize(samples: &[ResourceSample]) -> ResourceSummary {
    let Some(count) = u32::try_from(samples.len()).ok().filter(|n| *n > 0) else {
        return ResourceSummary::default();
    };
    let weights = interval_weights(samples);
    let weighted = |value: fn(&ResourceSample) -> f64| -> f64 {
        samples
            .iter()
            .zip(&weights)
            .map(|(s, w)| value(s) * w)
            .sum()
    };
    let user = weighted(|s| s.cpu_user_pct);
    let system = weighted(|s| s.cpu_system_pct);
    let run = samples
        .iter()
        .all(|s| s.cpu_run_pct.is_some())
        .then(|| weighted(|s| s.cpu_run_pct.unwrap_or_default()));
    let processes_peak = samples.iter().map(|s| s.processes).max().unwrap_or(0);
    let window_ms = samples.last().map_or(0, |s| s.t_ms);
    let rss_total: u128 = samples.iter().map(|s| u128::from(s.rss_bytes)).sum();
    ResourceSummary {
        samples: count,
        cpu_pct_mean: total_cpu_pct(user + system, run, processes_peak, window_ms),
        cpu_user_pct_mean: user,
        cpu_system_pct_mean: system,
        rss_mean_bytes: u64::try_from(rss_total / u128::from(count)).unwrap_or(u64::MAX),
        rss_peak_bytes: samples.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
        threads_peak: samples.iter().map(|s| s.threads).max().unwrap_or(0),
        processes_peak,
        ctx_voluntary: samples.iter().map(|s| s.ctx_voluntary).sum(),
        ctx_involuntary: samples.iter().map(|s| s.ctx_involuntary).sum(),
    }
}

/// The window's mean CPU in percent of a core: the threads' run time
/// (`run`) unless it falls short of the clock ticks' total (`ticks`) by
/// more than the ticks' own resolution, two ticks per process (each of
/// user and system is rounded down to a tick at both ends of the window).
/// It falls short where threads lived less than a sample (a thread per
/// connection): the scheduler's run time of a thread is lost with it,
/// while its process's ticks keep it.
fn total_cpu_pct(ticks: f64, run: Option<f64>, processes: u32, window_ms: u64) -> f64 {
    let Some(run) = run.filter(|_| window_ms > 0) else {
        return ticks;
    };
    let resolution_pct = 2.0 * f64::from(processes.max(1)) / USER_HZ / window_ms as f64 * 1e5;
    if run + resolution_pct >= ticks {
        run
    } else {
        ticks
    }
}

/// Each sample's share of the window: its interval over the whole window
/// (sample `i` covers `t_ms[i-1]..t_ms[i]`, the first one `0..t_ms[0]`).
/// Equal shares when the timestamps cannot tell (all zero).
fn interval_weights(samples: &[ResourceSample]) -> Vec<f64> {
    let mut previous_ms = 0;
    let intervals: Vec<u64> = samples
        .iter()
        .map(|s| {
            let interval = s.t_ms.saturating_sub(previous_ms);
            previous_ms = s.t_ms;
            interval
        })
        .collect();
    let total: u64 = intervals.iter().sum();
    if total == 0 {
        return vec![1.0 / samples.len() as f64; samples.len()];
    }
    intervals
        .iter()
        .map(|&ms| ms as f64 / total as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_ms: u64, user: f64, system: f64, rss_bytes: u64) -> ResourceSample {
        ResourceSample {
            t_ms,
            cpu_user_pct: user,
            cpu_system_pct: system,
            cpu_run_pct: None,
            rss_bytes,
            threads: 3,
            processes: 1,
            ctx_voluntary: 10,
            ctx_involuntary: 1,
        }
    }

    #[test]
    fn empty_series_has_an_empty_summary() {
        assert_eq!(summarize(&[]), ResourceSummary::default());
    }

    #[test]
    fn cpu_mean_weighs_each_interval_by_its_length() {
        // 100 ms at 50 %, then a 50 ms tail at 200 %: 150 ms of CPU time
        // over 150 ms of window is 100 %, not the plain mean of 125 %.
        let samples = [
            sample(100, 40.0, 10.0, 1000),
            sample(150, 150.0, 50.0, 3000),
        ];
        let summary = summarize(&samples);
        assert!((summary.cpu_pct_mean - 100.0).abs() < 1e-9);
        assert!((summary.cpu_user_pct_mean - 76.666_666_666).abs() < 1e-6);
        assert!((summary.cpu_system_pct_mean - 23.333_333_333).abs() < 1e-6);
        assert_eq!(summary.samples, 2);
        assert_eq!(summary.rss_mean_bytes, 2000);
        assert_eq!(summary.rss_peak_bytes, 3000);
        assert_eq!(summary.ctx_voluntary, 20);
        assert_eq!(summary.ctx_involuntary, 2);
        assert_eq!((summary.threads_peak, summary.processes_peak), (3, 1));
    }

    #[test]
    fn the_total_is_the_run_time_where_every_sample_has_it() {
        // 1 s of window holding one tick of user time, and 13.7 ms of run
        // time: the total is the run time, not the tick.
        let timed = |t_ms, user, run| ResourceSample {
            cpu_run_pct: Some(run),
            ..sample(t_ms, user, 0.0, 0)
        };
        let samples = [timed(500, 2.0, 1.5), timed(1000, 0.0, 1.24)];
        let summary = summarize(&samples);
        assert!((summary.cpu_pct_mean - 1.37).abs() < 1e-9, "{summary:?}");
        assert!((summary.cpu_user_pct_mean - 1.0).abs() < 1e-9);
        // A sample without it (an older `serve`) leaves the ticks' total.
        let mixed = [timed(500, 2.0, 1.5), sample(1000, 0.0, 0.0, 0)];
        assert!((summarize(&mixed).cpu_pct_mean - 1.0).abs() < 1e-9);
    }

    #[test]
    fn run_time_short_of_the_ticks_by_more_than_their_resolution_gives_way() {
        // A thread per connection: the run time saw 5 % of a core, the
        // ticks of its single process 40 %, 35 % apart where two ticks
        // over 1 s are 2 %.
        let short = ResourceSample {
            cpu_run_pct: Some(5.0),
            ..sample(1000, 30.0, 10.0, 0)
        };
        assert!((summarize(&[short]).cpu_pct_mean - 40.0).abs() < 1e-9);
        // Within two ticks of each other, the run time is the finer one.
        let close = ResourceSample {
            cpu_run_pct: Some(38.5),
            ..short
        };
        assert!((summarize(&[close]).cpu_pct_mean - 38.5).abs() < 1e-9);
    }

    #[test]
    fn zero_timestamps_fall_back_to_equal_weights() {
        let samples = [sample(0, 10.0, 0.0, 0), sample(0, 30.0, 0.0, 0)];
        assert!((summarize(&samples).cpu_pct_mean - 20.0).abs() < 1e-9);
    }
}
