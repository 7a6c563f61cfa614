//! How far each host's clock is from this one's. Generators start their
//! windows at an instant of their own clock (`load --start-at`) and the
//! server host places its samples by its clock, so an offset between hosts
//! shifts windows against each other. It is measured as NTP does: over one
//! SSH session, a few request/answer round trips, each answer the host's
//! time; the round trip with the shortest delay bounds the offset best
//! (± half that delay).

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use corobench_spec::HostAddress;

use crate::transport::Transport;

/// Round trips per host; the shortest is kept.
const ROUNDS: usize = 8;
/// The whole measurement of one host, connection included.
const LIMIT: Duration = Duration::from_secs(30);
/// The largest offset, as a fraction of the measured window, a run
/// accepts: beyond it, generators would measure visibly different seconds.
pub const MAX_OFFSET_FRACTION: f64 = 0.05;

/// Why a host's clock could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ClockError {
    #[error("no answer within {0:?}")]
    NoAnswer(Duration),
    #[error("cannot start the transport's client: {0}")]
    Start(std::io::Error),
    #[error("the session closed{}", .0.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Closed(Option<std::io::Error>),
    #[error("its `date +%s.%N` printed {0:?}, not seconds with nanoseconds")]
    NotNanoseconds(String),
}

/// One host's clock against this one's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockReading {
    /// The host's time minus this machine's, in seconds.
    pub offset_s: f64,
    /// Half the shortest round trip: the offset is within ± this.
    pub uncertainty_s: f64,
}

impl ClockReading {
    /// The offset at its worst: its size plus its uncertainty.
    #[must_use]
    pub fn worst_s(self) -> f64 {
        self.offset_s.abs() + self.uncertainty_s
    }
}

/// Measures `host`'s clock over one SSH session.
///
/// # Errors
/// The session fails, the host's `date` cannot print nanoseconds, or the
/// measurement takes longer than its limit.
pub fn measure(transport: &dyn Transport, host: &HostAddress) -> Result<ClockReading, ClockError> {
    let script = "while read -r _; do date +%s.%N; done".to_string();
    let argv = ["sh".to_string(), "-c".to_string(), script];
    let command = transport.command(host, &argv);
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(round_trips(command));
    });
    receiver
        .recv_timeout(LIMIT)
        .map_err(|_| ClockError::NoAnswer(LIMIT))?
}

/// The round trips of one session, and the best reading among them.
fn round_trips(mut command: Command) -> Result<ClockReading, ClockError> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(ClockError::Start)?;
    let result = (|| {
        let mut stdin = child.stdin.take().ok_or(ClockError::Closed(None))?;
        let stdout = child.stdout.take().ok_or(ClockError::Closed(None))?;
        let mut lines = BufReader::new(stdout).lines();
        let mut readings = Vec::with_capacity(ROUNDS);
        for _ in 0..ROUNDS {
            let sent = now_s();
            writeln!(stdin, "t").map_err(|e| ClockError::Closed(Some(e)))?;
            let line = lines
                .next()
                .ok_or(ClockError::Closed(None))?
                .map_err(|e| ClockError::Closed(Some(e)))?;
            let received = now_s();
            readings.push(reading(sent, &line, received)?);
        }
        best(&readings).ok_or(ClockError::Closed(None))
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// One round trip: the host's time against the midpoint of ours.
fn reading(sent: f64, answer: &str, received: f64) -> Result<ClockReading, ClockError> {
    let remote: f64 = answer
        .trim()
        .parse()
        .map_err(|_| ClockError::NotNanoseconds(answer.to_owned()))?;
    Ok(ClockReading {
        offset_s: remote - (sent + received) / 2.0,
        uncertainty_s: (received - sent) / 2.0,
    })
}

/// The reading of the shortest round trip.
fn best(readings: &[ClockReading]) -> Option<ClockReading> {
    readings
        .iter()
        .copied()
        .min_by(|a, b| a.uncertainty_s.total_cmp(&b.uncertainty_s))
}

fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Why a run cannot measure windows of `window` with this clock, if so.
#[must_use]
pub fn too_far(host: &str, reading: ClockReading, window: Duration) -> Option<String> {
    let bound = window.as_secs_f64() * MAX_OFFSET_FRACTION;
    (reading.worst_s() > bound).then(|| {
        format!(
            "{host}: its clock is {:+.1} ms (± {:.1} ms) from this machine's, more than {:.0}% of \
             the {:?} window ({:.1} ms): the generators would measure different seconds; \
             synchronise the hosts' clocks (chrony or another NTP client) or measure longer \
             windows",
            reading.offset_s * 1e3,
            reading.uncertainty_s * 1e3,
            MAX_OFFSET_FRACTION * 100.0,
            window,
            bound * 1e3
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shortest_round_trip_gives_the_offset() {
        let readings = [
            reading(100.0, "100.050", 100.020).unwrap(),
            reading(200.0, "200.0045", 200.001).unwrap(),
        ];
        let kept = best(&readings).unwrap();
        assert!((kept.offset_s - 0.004).abs() < 1e-9, "{kept:?}");
        assert!((kept.uncertainty_s - 0.0005).abs() < 1e-9, "{kept:?}");
    }

    #[test]
    fn a_date_without_nanoseconds_is_said() {
        let error = reading(1.0, "1764180000.%N", 1.1).unwrap_err().to_string();
        assert!(error.contains("not seconds with nanoseconds"), "{error}");
    }

    #[test]
    fn an_offset_beyond_its_share_of_the_window_is_refused_with_the_figure() {
        let close = ClockReading {
            offset_s: 0.002,
            uncertainty_s: 0.001,
        };
        assert_eq!(too_far("h", close, Duration::from_secs(1)), None);
        let far = ClockReading {
            offset_s: -0.120,
            uncertainty_s: 0.001,
        };
        let why = too_far("ssh://g1", far, Duration::from_secs(1)).unwrap();
        assert!(why.contains("-120.0 ms"), "{why}");
        assert!(why.contains("5% of the 1s window"), "{why}");
        assert_eq!(too_far("h", far, Duration::from_secs(10)), None);
    }
}
