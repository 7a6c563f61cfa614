//! The figures a trial over TLS adds, as metrics analysed like any other:
//! handshake and connect times, the share of handshakes resumed, and the
//! handshakes that failed. A trial in cleartext has none of them, so runs
//! without TLS analyse and report exactly as before.

use crate::analysis::{Better, MetricUnit};
use crate::run::{TrialRecord, TrialStatus};

/// A TLS figure of one trial's measured window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TlsFigure {
    /// Median time from the TCP connection to the session being ready.
    HandshakeP50,
    /// 99th percentile of the same.
    HandshakeP99,
    /// Median time of a TCP connect, over TLS runs.
    ConnectP50,
    /// 99th percentile of the same.
    ConnectP99,
    /// Resumed handshakes over all completed handshakes.
    Resumed,
    /// Failed handshakes over all attempted (failed and completed).
    HandshakeErrors,
}

impl TlsFigure {
    pub const ALL: [Self; 6] = [
        Self::HandshakeP50,
        Self::HandshakeP99,
        Self::ConnectP50,
        Self::ConnectP99,
        Self::Resumed,
        Self::HandshakeErrors,
    ];

    /// The stable identifier used in JSON and CSV; also the word a claim
    /// names it by.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::HandshakeP50 => "tls_handshake_p50_us",
            Self::HandshakeP99 => "tls_handshake_p99_us",
            Self::ConnectP50 => "tls_connect_p50_us",
            Self::ConnectP99 => "tls_connect_p99_us",
            Self::Resumed => "tls_resumed",
            Self::HandshakeErrors => "tls_handshake_errors",
        }
    }

    /// The short column heading.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::HandshakeP50 => "handshake p50",
            Self::HandshakeP99 => "handshake p99",
            Self::ConnectP50 => "connect p50",
            Self::ConnectP99 => "connect p99",
            Self::Resumed => "resumed",
            Self::HandshakeErrors => "handshake errors",
        }
    }

    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Self::HandshakeP50 => "median TLS handshake, from the TCP connection to the session",
            Self::HandshakeP99 => "99th percentile TLS handshake",
            Self::ConnectP50 => "median TCP connect of a TLS connection",
            Self::ConnectP99 => "99th percentile TCP connect of a TLS connection",
            Self::Resumed => "TLS handshakes that resumed a session, over all completed",
            Self::HandshakeErrors => "failed TLS handshakes, over all attempted",
        }
    }

    #[must_use]
    pub fn unit(self) -> MetricUnit {
        match self {
            Self::Resumed | Self::HandshakeErrors => MetricUnit::Fraction,
            _ => MetricUnit::Microseconds,
        }
    }

    /// More resumption is cheaper; time and failures are costs.
    #[must_use]
    pub fn better(self) -> Better {
        match self {
            Self::Resumed => Better::Higher,
            _ => Better::Lower,
        }
    }

    /// The figure over `trial`'s window; `None` for a trial in cleartext,
    /// and where no handshake (or connect) completed in the window.
    #[must_use]
    pub fn value(self, trial: &TrialRecord) -> Option<f64> {
        if trial.status != TrialStatus::Ok {
            return None;
        }
        let load = trial.load.as_ref()?;
        let tls = load.tls.as_ref()?;
        let handshakes = tls.handshakes();
        let percentile = |histogram: &crate::LatencyHistogram, p: f64| {
            (histogram.count() > 0).then(|| histogram.value_at_percentile_us(p) as f64)
        };
        let connect = load.connect_latency.as_ref().map(|c| &c.histogram);
        match self {
            Self::HandshakeP50 => percentile(&tls.handshake.histogram, 50.0),
            Self::HandshakeP99 => percentile(&tls.handshake.histogram, 99.0),
            Self::ConnectP50 => percentile(connect?, 50.0),
            Self::ConnectP99 => percentile(connect?, 99.0),
            Self::Resumed => {
                (handshakes > 0).then(|| tls.resumed_handshakes as f64 / handshakes as f64)
            }
            Self::HandshakeErrors => {
                let attempted = handshakes + load.errors.handshake;
                (attempted > 0).then(|| load.errors.handshake as f64 / attempted as f64)
            }
        }
    }
}
