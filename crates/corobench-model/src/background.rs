//! A background request: streams that carry a second request (a slow one,
//! say `/io?ms=200`) on every HTTP/2 connection beside the measured
//! streams, reopened as soon as each ends, so that the measured requests'
//! latency shows what a slow stream on the same connection does to them
//! (head-of-line blocking). Its outcomes are counted here, never with the
//! measured ones.

use serde::{Deserialize, Serialize};

/// What a scenario keeps in flight beside its measured requests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundRecord {
    /// Path and query of the background request (always a GET), e.g.
    /// `/io?ms=200`.
    pub path: String,
    /// Background streams kept open on each connection.
    pub streams: u32,
}

/// What the background streams did over the measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackgroundReport {
    pub path: String,
    /// Streams kept open on each connection.
    pub streams_per_connection: u32,
    /// Background responses below 400 completed in the window.
    pub responses: u64,
    /// Background requests that failed (status 400 and above, resets,
    /// timeouts, lost connections).
    pub errors: u64,
    /// Mean and longest latency of the background responses, so that a
    /// reader sees the slow request really was slow.
    pub latency_mean_ms: f64,
    pub latency_max_ms: f64,
}

impl BackgroundReport {
    /// Adds `other`'s outcomes: counts sum, the mean is weighted by the
    /// responses, the longest is kept.
    pub fn add(&mut self, other: &Self) {
        let total = self.responses + other.responses;
        if total > 0 {
            #[allow(clippy::cast_precision_loss)]
            let weighted = self.latency_mean_ms * self.responses as f64
                + other.latency_mean_ms * other.responses as f64;
            #[allow(clippy::cast_precision_loss)]
            let mean = weighted / total as f64;
            self.latency_mean_ms = mean;
        }
        self.responses = total;
        self.errors += other.errors;
        self.latency_max_ms = self.latency_max_ms.max(other.latency_max_ms);
    }

    /// One sentence for a report: what ran beside the measured streams.
    #[must_use]
    pub fn sentence(&self) -> String {
        let plural = if self.streams_per_connection == 1 {
            ""
        } else {
            "s"
        };
        format!(
            "{} stream{plural} per connection of GET {} beside the measured ones: {} answered \
             in the window (mean {:.1} ms, longest {:.1} ms), {} failed",
            self.streams_per_connection,
            self.path,
            self.responses,
            self.latency_mean_ms,
            self.latency_max_ms,
            self.errors
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(responses: u64, mean: f64, max: f64) -> BackgroundReport {
        BackgroundReport {
            path: "/io?ms=200".to_owned(),
            streams_per_connection: 1,
            responses,
            errors: 1,
            latency_mean_ms: mean,
            latency_max_ms: max,
        }
    }

    #[test]
    fn adding_weights_the_mean_by_responses() {
        let mut a = report(1, 100.0, 100.0);
        a.add(&report(3, 200.0, 210.0));
        assert_eq!((a.responses, a.errors), (4, 2));
        assert!((a.latency_mean_ms - 175.0).abs() < 1e-9);
        assert!((a.latency_max_ms - 210.0).abs() < 1e-9);
        let mut empty = report(0, 0.0, 0.0);
        empty.add(&report(0, 0.0, 0.0));
        assert!(empty.latency_mean_ms.abs() < f64::EPSILON);
        assert!(
            a.sentence().starts_with(
                "1 stream per connection of GET /io?ms=200 beside the measured ones: 4"
            )
        );
    }
}
