//! What a load run over HTTP/2 adds to its report: the streams it kept open
//! on each connection, what the server allowed, and its GOAWAYs. Stream
//! errors (resets, refused streams, flow-control stalls, protocol errors)
//! are error kinds of [`crate::ErrorCounts`], counted like any other.

use serde::{Deserialize, Serialize};

/// How the generator spoke HTTP/2, and how many streams it kept open.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Http2Report {
    /// `h2` (over TLS, agreed by ALPN) or `h2c` (cleartext, by prior
    /// knowledge). Merged: every distinct value, comma-separated.
    pub protocol: String,
    /// Streams asked for on each connection (`-m`).
    pub streams_per_connection: u32,
    /// The streams each connection could keep open: those asked for, or
    /// fewer where the server's SETTINGS_MAX_CONCURRENT_STREAMS was lower
    /// (the lowest any connection was given).
    pub streams_effective: u32,
    /// The lowest SETTINGS_MAX_CONCURRENT_STREAMS a server sent; absent when
    /// it sent none (no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_max_concurrent_streams: Option<u32>,
    /// Streams in flight on a connection (sent, response not complete),
    /// time-weighted over the measured window: the mean per connection.
    pub streams_in_flight_mean: f64,
    /// The most streams in flight on one connection during the window.
    pub streams_in_flight_max: u32,
    /// GOAWAY frames received in the window (each closes its connection
    /// once its remaining streams finish; it reconnects).
    pub goaways: u64,
    /// SETTINGS_INITIAL_WINDOW_SIZE the generator announced (bytes).
    pub stream_window_bytes: u32,
    /// The connection's receive window the generator kept (bytes).
    pub connection_window_bytes: u32,
    /// SETTINGS_MAX_FRAME_SIZE the generator announced (bytes).
    pub max_frame_bytes: u32,
    /// Streams that carried a background request beside the measured ones
    /// (absent when none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<crate::BackgroundReport>,
}

impl Http2Report {
    /// Adds `other`'s figures to these: counts sum, limits take the lowest,
    /// maxima the highest, and the in-flight mean is weighted by each side's
    /// connection-seconds (`weights`: mine, theirs), so that the result is the
    /// mean over every connection of both.
    pub fn add(&mut self, other: &Self, (mine, theirs): (f64, f64)) {
        let total = mine + theirs;
        self.streams_in_flight_mean = if total > 0.0 {
            (self.streams_in_flight_mean * mine + other.streams_in_flight_mean * theirs) / total
        } else {
            0.0
        };
        self.streams_in_flight_max = self.streams_in_flight_max.max(other.streams_in_flight_max);
        self.goaways += other.goaways;
        self.streams_effective = self.streams_effective.min(other.streams_effective);
        self.server_max_concurrent_streams = match (
            self.server_max_concurrent_streams,
            other.server_max_concurrent_streams,
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (&mut self.background, &other.background) {
            (Some(mine), Some(theirs)) => mine.add(theirs),
            (mine @ None, Some(theirs)) => *mine = Some(theirs.clone()),
            _ => {}
        }
        if !self.protocol.split(',').any(|p| p == other.protocol) {
            let mut all: Vec<&str> = self
                .protocol
                .split(',')
                .chain(other.protocol.split(','))
                .collect();
            all.sort_unstable();
            all.dedup();
            self.protocol = all.join(",");
        }
    }

    /// The settings that must agree for two reports to merge, as words.
    #[must_use]
    pub fn settings_words(&self) -> String {
        format!(
            "{} streams per connection, windows {}/{} bytes, frames up to {} bytes",
            self.streams_per_connection,
            self.stream_window_bytes,
            self.connection_window_bytes,
            self.max_frame_bytes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(mean: f64, max: u32, limit: Option<u32>) -> Http2Report {
        Http2Report {
            protocol: "h2c".to_owned(),
            streams_per_connection: 10,
            streams_effective: limit.map_or(10, |l| l.min(10)),
            server_max_concurrent_streams: limit,
            streams_in_flight_mean: mean,
            streams_in_flight_max: max,
            goaways: 1,
            stream_window_bytes: 65_535,
            connection_window_bytes: 65_535,
            max_frame_bytes: 16_384,
            background: None,
        }
    }

    #[test]
    fn adding_weights_the_mean_and_keeps_the_lowest_limit() {
        let mut a = report(2.0, 3, None);
        a.add(&report(8.0, 9, Some(4)), (1.0, 3.0));
        assert!((a.streams_in_flight_mean - 6.5).abs() < 1e-9);
        assert_eq!((a.streams_in_flight_max, a.goaways), (9, 2));
        assert_eq!(
            (a.server_max_concurrent_streams, a.streams_effective),
            (Some(4), 4)
        );
        let mut b = report(1.0, 1, None);
        b.protocol = "h2".to_owned();
        b.add(&a, (0.0, 0.0));
        assert_eq!(b.protocol, "h2,h2c");
        assert!(b.streams_in_flight_mean.abs() < f64::EPSILON);
    }
}
