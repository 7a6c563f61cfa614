//! Resources a target's process tree used while it was measured.

use serde::{Deserialize, Serialize};

/// One sample of the whole process tree (all processes of the target).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceSample {
    /// Milliseconds since sampling began.
    pub t_ms: u64,
    /// User CPU since the previous sample, in percent of one core (100 = one core busy).
    pub cpu_user_pct: f64,
    /// System CPU since the previous sample, in percent of one core.
    pub cpu_system_pct: f64,
    /// CPU since the previous sample from the scheduler's run time of the
    /// tree's threads (`schedstat`, in nanoseconds), in percent of one
    /// core: finer than the clock ticks of user + system. `None` where it
    /// could not be read (and in samples stored before it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_run_pct: Option<f64>,
    /// Resident memory summed over the tree.
    pub rss_bytes: u64,
    /// OS threads summed over the tree.
    pub threads: u32,
    /// Live processes in the tree.
    pub processes: u32,
    /// Voluntary context switches since the previous sample.
    pub ctx_voluntary: u64,
    /// Involuntary context switches since the previous sample.
    pub ctx_involuntary: u64,
}

/// The series condensed to the figures a report shows. A mean with no
/// sample to average is NaN, which JSON writes as `null`: `null` reads
/// back as NaN, so a summary survives a JSON round trip (an exported run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceSummary {
    pub samples: u32,
    /// Mean CPU over the window, in percent of one core: from the
    /// scheduler's run time where every sample has it and it does not fall
    /// short of the ticks' total, else user + system (clock ticks).
    #[serde(deserialize_with = "nan_when_null")]
    pub cpu_pct_mean: f64,
    #[serde(deserialize_with = "nan_when_null")]
    pub cpu_user_pct_mean: f64,
    #[serde(deserialize_with = "nan_when_null")]
    pub cpu_system_pct_mean: f64,
    pub rss_mean_bytes: u64,
    pub rss_peak_bytes: u64,
    pub threads_peak: u32,
    pub processes_peak: u32,
    /// Context switches over the whole window.
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
}

/// A number, or NaN where JSON holds `null` (how it writes a NaN).
fn nan_when_null<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mean_without_samples_survives_json() {
        let summary = ResourceSummary {
            cpu_pct_mean: f64::NAN,
            rss_peak_bytes: 4096,
            ..ResourceSummary::default()
        };
        let text = serde_json::to_string(&summary).unwrap();
        assert!(text.contains("\"cpu_pct_mean\":null"), "{text}");
        let back: ResourceSummary = serde_json::from_str(&text).unwrap();
        assert!(back.cpu_pct_mean.is_nan());
        assert_eq!(back.rss_peak_bytes, 4096);
        assert_eq!(back.cpu_user_pct_mean, 0.0);
    }
}
