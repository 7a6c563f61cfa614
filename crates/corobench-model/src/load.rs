//! What one load-generator run measured.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::histogram::{LatencyReport, LatencySummary};
use crate::schedule::{ScheduleKind, WireMode};

/// Version of the `corobench load --json` document; bumped on incompatible change.
pub const LOAD_REPORT_SCHEMA_VERSION: u32 = 1;

/// How many kinds of error [`ErrorCounts::by_kind`] lists.
pub const ERROR_KINDS: usize = 15;

/// Failed requests, counted by what went wrong.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// The TCP connection could not be established.
    pub connect: u64,
    /// No file descriptor was left for a new socket (EMFILE / ENFILE).
    pub fd_exhausted: u64,
    /// No local port was left for a new connection (EADDRNOTAVAIL): the
    /// ephemeral range is taken by open connections and ones in TIME_WAIT.
    /// Absent from reports made before it was counted, and from JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ports_exhausted: u64,
    /// The TLS handshake failed: refused (a certificate, version or ALPN
    /// the client cannot accept), cut off by the server, or not finished
    /// within the timeout. Absent from JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub handshake: u64,
    /// Writing the request failed.
    pub write: u64,
    /// Reading the response failed (reset), or the server closed the
    /// connection before the response was complete.
    pub read: u64,
    /// No complete response within the timeout.
    pub timeout: u64,
    /// The bytes received are not an HTTP/1.x response (over HTTP/2: a
    /// response without a `:status`).
    pub malformed: u64,
    /// HTTP/2: the server reset the stream (RST_STREAM with any code but
    /// REFUSED_STREAM). Absent from JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rst_stream: u64,
    /// HTTP/2: the server refused the stream unprocessed (RST_STREAM
    /// REFUSED_STREAM, or above the last stream its GOAWAY let finish).
    /// Absent from JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub refused_stream: u64,
    /// HTTP/2: the request's body could not be sent within the timeout
    /// because the server's flow-control windows stayed closed. Absent from
    /// JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flow_control_stall: u64,
    /// HTTP/2: the connection broke the protocol (a malformed frame, a
    /// header block HPACK cannot decode, a window overrun), so the
    /// generator closed it with GOAWAY; each stream open on it counts once,
    /// or the connection once when none was. Absent from JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub protocol: u64,
    /// A complete response with a 4xx status.
    pub status_4xx: u64,
    /// A complete response with a 5xx status.
    pub status_5xx: u64,
    /// A complete response below 400 whose status class is not the one the
    /// workload expects (`expect_status`): a redirect where a page was
    /// expected, say. Absent from JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unexpected_status: u64,
}

impl ErrorCounts {
    /// Every error of every kind.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.transport() + self.status_4xx + self.status_5xx + self.unexpected_status
    }

    /// Errors in which no complete HTTP response arrived.
    #[must_use]
    pub fn transport(&self) -> u64 {
        self.connect
            + self.fd_exhausted
            + self.ports_exhausted
            + self.handshake
            + self.write
            + self.read
            + self.timeout
            + self.malformed
            + self.rst_stream
            + self.refused_stream
            + self.flow_control_stall
            + self.protocol
    }

    /// Errors of every kind over every attempt: `requests` complete
    /// responses plus the errors that left no response; 0 without attempts.
    #[must_use]
    pub fn rate(&self, requests: u64) -> f64 {
        let attempts = requests + self.transport();
        if attempts == 0 {
            0.0
        } else {
            self.total() as f64 / attempts as f64
        }
    }

    /// Adds `other` kind by kind.
    pub fn add(&mut self, other: &Self) {
        self.connect += other.connect;
        self.fd_exhausted += other.fd_exhausted;
        self.ports_exhausted += other.ports_exhausted;
        self.handshake += other.handshake;
        self.write += other.write;
        self.read += other.read;
        self.timeout += other.timeout;
        self.malformed += other.malformed;
        self.rst_stream += other.rst_stream;
        self.refused_stream += other.refused_stream;
        self.flow_control_stall += other.flow_control_stall;
        self.protocol += other.protocol;
        self.status_4xx += other.status_4xx;
        self.status_5xx += other.status_5xx;
        self.unexpected_status += other.unexpected_status;
    }

    /// `(name, count)` for every kind, in a stable order, for printing.
    #[must_use]
    pub fn by_kind(&self) -> [(&'static str, u64); ERROR_KINDS] {
        [
            ("connect", self.connect),
            ("fd_exhausted", self.fd_exhausted),
            ("ports_exhausted", self.ports_exhausted),
            ("handshake", self.handshake),
            ("write", self.write),
            ("read", self.read),
            ("timeout", self.timeout),
            ("malformed", self.malformed),
            ("rst_stream", self.rst_stream),
            ("refused_stream", self.refused_stream),
            ("flow_control_stall", self.flow_control_stall),
            ("protocol", self.protocol),
            ("status_4xx", self.status_4xx),
            ("status_5xx", self.status_5xx),
            ("unexpected_status", self.unexpected_status),
        ]
    }
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// Complete responses by status class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCounts {
    #[serde(rename = "1xx")]
    pub informational: u64,
    #[serde(rename = "2xx")]
    pub success: u64,
    #[serde(rename = "3xx")]
    pub redirection: u64,
    #[serde(rename = "4xx")]
    pub client_error: u64,
    #[serde(rename = "5xx")]
    pub server_error: u64,
}

impl StatusCounts {
    /// Counts one response with this status code. A code outside 100–599
    /// is no HTTP status and belongs to no class: it is not counted here
    /// (the load generator counts such a response as `malformed`).
    pub fn count(&mut self, status: u16) {
        match status {
            100..=199 => self.informational += 1,
            200..=299 => self.success += 1,
            300..=399 => self.redirection += 1,
            400..=499 => self.client_error += 1,
            500..=599 => self.server_error += 1,
            _ => {}
        }
    }

    /// Adds `other` class by class.
    pub fn add(&mut self, other: &Self) {
        self.informational += other.informational;
        self.success += other.success;
        self.redirection += other.redirection;
        self.client_error += other.client_error;
        self.server_error += other.server_error;
    }

    /// `(class, count)` for every class, `1xx` to `5xx`, for printing.
    #[must_use]
    pub fn by_class(&self) -> [(&'static str, u64); 5] {
        [
            ("1xx", self.informational),
            ("2xx", self.success),
            ("3xx", self.redirection),
            ("4xx", self.client_error),
            ("5xx", self.server_error),
        ]
    }

    /// Every complete response.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.informational + self.success + self.redirection + self.client_error + self.server_error
    }

    /// Responses in the class of `expected` (a workload's `expect_status`),
    /// or without one, those below 400: the answers that meet it.
    #[must_use]
    pub fn meeting(&self, expected: Option<u16>) -> u64 {
        match expected {
            None => self.succeeded(),
            Some(100..=199) => self.informational,
            Some(200..=299) => self.success,
            Some(300..=399) => self.redirection,
            Some(400..=499) => self.client_error,
            Some(_) => self.server_error,
        }
    }

    /// Responses that are no error: 1xx, 2xx and 3xx.
    #[must_use]
    pub fn succeeded(&self) -> u64 {
        self.informational + self.success + self.redirection
    }
}

/// One second of the measured window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelineSecond {
    /// Seconds since the measured window began.
    pub second: u32,
    /// Complete responses to requests sent in this second.
    pub requests: u64,
    /// Errors of any kind of requests sent in this second (errors of no
    /// request: when they happened).
    pub errors: u64,
    pub bytes_read: u64,
    pub mean_latency_us: f64,
    pub max_latency_us: u64,
}

/// How well an open-loop run kept its schedule.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopReport {
    pub requested_rate_per_s: f64,
    /// Requests actually sent per second of the measured window.
    pub achieved_rate_per_s: f64,
    /// Requests whose intended send time fell in the measured window.
    pub scheduled: u64,
    /// Requests sent in the measured window, whenever they were due; the
    /// responses counted are responses to these, so never more than this.
    pub sent: u64,
    /// How late requests left compared with their intended send time.
    pub mean_send_lag_us: f64,
    pub max_send_lag_us: u64,
    /// Requests due within this many microseconds of a send left with it
    /// (`--tick`); absent from reports written before it was said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_us: Option<u64>,
}

/// The end of a timed window: the generator stops sending when the window
/// closes and keeps reading the answers still owed to requests sent in it,
/// up to the request timeout. Those answers count in the window's figures
/// (the timeline puts each in the second its request was sent in); what is
/// still unanswered at the timeout counts as a timeout error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DrainReport {
    /// Responses that arrived after the window closed.
    pub responses: u64,
    /// Requests still unanswered when the drain gave up, counted as timeouts.
    pub timeouts: u64,
    /// How long the drain lasted.
    pub elapsed_s: f64,
}

/// Kernel receive stamps, and what they tell of the generator: the time
/// from the kernel's receipt of a response to the generator's read of it
/// (its wake-up and event-loop turn), which the stamps take out of the
/// latency.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelStamps {
    /// Responses in the window whose bytes carried a stamp earlier than
    /// the read (the first ones of a run may carry none).
    pub stamped: u64,
    pub mean_read_delay_us: f64,
    pub max_read_delay_us: u64,
    /// Requests were stamped when the kernel sent them too
    /// (`--kernel-send-stamps`), and their latency counts from then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub send: bool,
}

/// The generator's own cost, so a reader can tell whether it measured itself.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GeneratorUsage {
    pub threads: u32,
    /// User CPU time of the generator threads during the measured window.
    pub cpu_user_s: f64,
    /// System CPU time of the generator threads during the measured window.
    pub cpu_system_s: f64,
    /// (user + system) CPU time per complete response.
    pub cpu_us_per_request: f64,
    /// CPU time over (elapsed × threads): 1.0 means every generator core ran flat out.
    pub utilization: f64,
    /// Peak resident memory of the generator process.
    pub max_rss_bytes: u64,
}

impl GeneratorUsage {
    /// Usage from CPU seconds spent over `core_seconds` (elapsed × threads)
    /// for `requests` complete responses; per request and utilisation are 0
    /// where nothing was answered or no time passed.
    #[must_use]
    pub fn from_cpu(
        threads: u32,
        (cpu_user_s, cpu_system_s): (f64, f64),
        core_seconds: f64,
        requests: u64,
        max_rss_bytes: u64,
    ) -> Self {
        let cpu_s = cpu_user_s + cpu_system_s;
        Self {
            threads,
            cpu_user_s,
            cpu_system_s,
            cpu_us_per_request: if requests == 0 {
                0.0
            } else {
                cpu_s * 1e6 / requests as f64
            },
            utilization: if core_seconds > 0.0 {
                cpu_s / core_seconds
            } else {
                0.0
            },
            max_rss_bytes,
        }
    }
}

/// Something the reader of a load report must know before trusting it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LoadWarning {
    /// The generator's cores were (nearly) saturated.
    GeneratorBound { utilization: f64 },
    /// An open-loop run fell behind its schedule.
    ScheduleMissed {
        requested_rate_per_s: f64,
        achieved_rate_per_s: f64,
    },
    /// An open-loop request left more than `bound_us` after its intended
    /// send time: the offered load was not the steady rate asked for.
    ScheduleNotKept { max_send_lag_us: u64, bound_us: u64 },
    /// Some requests failed.
    Errors { total: u64, error_rate: f64 },
    /// File descriptors ran out while opening connections.
    FdExhausted { limit: u64 },
    /// Local ports ran out while opening connections (EADDRNOTAVAIL).
    PortsExhausted { failed_connects: u64 },
    /// Merged reports only: the generators measured together for only part
    /// of the time any of them measured.
    PartialOverlap { common_s: f64, span_s: f64 },
    /// A cleartext request was answered with TLS records: the port speaks
    /// TLS (`https://`), not plaintext HTTP.
    PortSpeaksTls { answers: u64 },
    /// The HTTP/2 connection preface was answered in HTTP/1.1: the server
    /// does not speak cleartext HTTP/2 (h2c).
    SpeaksHttp1 { answers: u64 },
    /// The background request (`--background`) was never answered in the
    /// window: nothing ran beside the measured streams, so the run says
    /// nothing of head-of-line blocking.
    BackgroundUnanswered { failed: u64 },
}

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::GeneratorBound { utilization } => write!(
                f,
                "generator-bound: the generator used {:.0}% of its cores, so these figures \
                 describe corobench, not the server; give the generator more cores (-t, --cpus) \
                 or fewer connections",
                utilization * 100.0
            ),
            Self::ScheduleMissed {
                requested_rate_per_s,
                achieved_rate_per_s,
            } => write!(
                f,
                "schedule missed: {achieved_rate_per_s:.0} req/s sent of {requested_rate_per_s:.0} \
                 requested; latency is still measured from the intended send times, but the \
                 offered load was lower; lower -R or add connections (-c) and threads (-t)"
            ),
            Self::ScheduleNotKept {
                max_send_lag_us,
                bound_us,
            } => write!(
                f,
                "schedule not kept: a request left {:.1} ms after its intended send time \
                 (more than {:.0} ms); the generator fell behind or every connection was busy, \
                 so the corrected latency may describe corobench or -c rather than the server; \
                 add connections (-c) or threads (-t), or warm up longer (--warmup)",
                *max_send_lag_us as f64 / 1000.0,
                *bound_us as f64 / 1000.0
            ),
            Self::Errors { total, error_rate } => write!(
                f,
                "{total} requests failed ({:.2}% of all); see the errors by kind",
                error_rate * 100.0
            ),
            Self::FdExhausted { limit } => write!(
                f,
                "ran out of file descriptors (limit {limit}); raise the limit with `ulimit -n` \
                 or use fewer connections (-c)"
            ),
            Self::PortsExhausted { failed_connects } => write!(
                f,
                "ran out of local ports: {failed_connects} connects failed with EADDRNOTAVAIL. \
                 Every connection takes a port from net.ipv4.ip_local_port_range, and the side \
                 that closes first keeps it in TIME_WAIT for 60 s, so a connection per request \
                 soon uses them all up; widen the range (sysctl net.ipv4.ip_local_port_range=\
                 \"1024 65535\"), let new connections reuse ports in TIME_WAIT (sysctl \
                 net.ipv4.tcp_tw_reuse=1), or offer fewer connections a second"
            ),
            Self::PortSpeaksTls { answers } => write!(
                f,
                "this port speaks TLS: {answers} plaintext requests were answered with TLS \
                 records, not HTTP; load it with an https:// URL"
            ),
            Self::SpeaksHttp1 { answers } => write!(
                f,
                "this server speaks HTTP/1.1, not h2c: {answers} connections had their HTTP/2 \
                 preface answered in HTTP/1.1; load it without --h2c, or over TLS with --h2 if \
                 it offers h2 by ALPN"
            ),
            Self::BackgroundUnanswered { failed } => write!(
                f,
                "the background request was never answered in the window ({failed} failed): \
                 nothing ran beside the measured streams, so these figures say nothing of \
                 head-of-line blocking; check its path answers below 400 and within the \
                 timeout"
            ),
            Self::PartialOverlap { common_s, span_s } => write!(
                f,
                "the generators measured together for {common_s:.2}s of the {span_s:.2}s any \
                 of them measured; req/s adds each generator's own rate, which holds only if \
                 the load was steady; start them with the same --start-at and -d"
            ),
        }
    }
}

/// Where and when a measured window was, so that reports of several
/// generators can be lined up on the wall clock and merged. Every key is
/// absent from reports made before corobench recorded it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowPlacement {
    /// The host name of the machine the generator ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// When the measured window opened: microseconds since the Unix epoch,
    /// by the generator host's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_start_unix_us: Option<u64>,
    /// `--start-at`: when the window was asked to open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_unix_us: Option<u64>,
    /// The window's actual opening minus `start_at_unix_us` (positive: late).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_offset_us: Option<i64>,
}

impl WindowPlacement {
    /// `actual_us - asked_us` as a signed offset, saturating at the ends of `i64`.
    #[must_use]
    pub fn offset_us(actual_us: u64, asked_us: u64) -> i64 {
        if actual_us >= asked_us {
            i64::try_from(actual_us - asked_us).unwrap_or(i64::MAX)
        } else {
            i64::try_from(asked_us - actual_us).map_or(i64::MIN, |d| -d)
        }
    }
}

/// What a merged report adds: the generators it was made from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergeDetail {
    /// The Unix second at which `timeline` second 0 begins; the generators'
    /// seconds are placed by wall clock, so they line up across hosts.
    pub timeline_start_unix_s: u64,
    /// One entry per generator report, in the order of their windows.
    pub generators: Vec<GeneratorPart>,
}

/// One generator's share of a merged report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GeneratorPart {
    /// The file the generator's report was read from.
    pub source: String,
    #[serde(flatten)]
    pub placement: WindowPlacement,
    pub backend: String,
    pub elapsed_s: f64,
    pub threads: u32,
    pub connections: u32,
    pub requests: u64,
    pub requests_per_s: f64,
    pub read_bytes_per_s: f64,
    pub errors: u64,
    pub error_rate: f64,
    /// This generator's latency alone (the merged histogram holds them all).
    pub latency: LatencySummary,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub open_loop: Option<OpenLoopReport>,
    pub generator: GeneratorUsage,
    pub warnings: Vec<LoadWarning>,
}

/// Everything one `corobench load` run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    pub schema_version: u32,
    pub url: String,
    pub method: String,
    /// The event-loop backend: `epoll` or `io_uring` (a merged report of
    /// both: `epoll,io_uring`).
    pub backend: String,
    #[serde(flatten)]
    pub placement: WindowPlacement,
    pub threads: u32,
    pub connections: u32,
    pub schedule: ScheduleKind,
    /// How the connections carried requests (keys absent when keep-alive, one at a time).
    #[serde(flatten)]
    pub wire: WireMode,
    pub warmup_s: f64,
    /// Length of the measured window.
    pub elapsed_s: f64,
    /// Complete responses, any status.
    pub requests: u64,
    pub requests_per_s: f64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub read_bytes_per_s: f64,
    pub status: StatusCounts,
    pub errors: ErrorCounts,
    /// Errors over (complete responses + transport errors).
    pub error_rate: f64,
    /// Closed loop: from the actual send. Open loop: from the intended send time (corrected).
    pub latency: LatencyReport,
    /// Open loop only: from the actual send (uncorrected).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub latency_uncorrected: Option<LatencyReport>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub open_loop: Option<OpenLoopReport>,
    /// How long each connect took, from the socket's creation to the TCP
    /// connection being established: with a connection per request (this
    /// time is then also part of every request's latency), and over TLS
    /// for every connection opened in the window.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub connect_latency: Option<LatencyReport>,
    /// Kept-alive connections opened again inside the measured window
    /// because the server closed them (`Connection: close`, HTTP/1.0, a
    /// limit of requests per connection, a GOAWAY): each one's connect
    /// falls inside the window. 0 (absent) when the server kept them open.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub reconnects: u64,
    pub generator: GeneratorUsage,
    /// Timed windows: how the answers still owed when the window closed
    /// were collected (merged: summed, with the longest drain). Absent from
    /// `-n` runs and from reports made before the generator drained.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub drain: Option<DrainReport>,
    /// Open loop: seconds from the generator's start until every
    /// connection was established (and primed, when asked) and the
    /// schedule began; its time zero is then (merged: the latest). Absent
    /// from closed loops and from reports made before the schedule waited.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ready_s: Option<f64>,
    /// With `--kernel-stamps`: responses were stamped when the kernel
    /// received them (`SO_TIMESTAMPING`) rather than when the generator read
    /// them, and how long the generator took to read them. Absent when not.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kernel_stamps: Option<KernelStamps>,
    pub timeline: Vec<TimelineSecond>,
    pub warnings: Vec<LoadWarning>,
    /// `https://` URLs: the TLS session and its handshakes.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tls: Option<crate::TlsReport>,
    /// HTTP/2 (`h2` or `h2c`): streams, settings and GOAWAYs.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub http2: Option<crate::Http2Report>,
    /// Present when `corobench merge` made this report from several.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub merged: Option<MergeDetail>,
    /// `corobench load --json` only: the kernel counters of the
    /// generator's own threads over its measured window (a trial on hosts
    /// stores them with the trial). Absent elsewhere, and from merges.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub counters: Option<crate::SideCounters>,
    /// `corobench load --probe` only: the machine-speed probe on the
    /// generator's CPUs before the load (MB of SHA-256 per second per CPU);
    /// merged: the generators' mean, when every one probed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub probe_mb_per_s: Option<f64>,
}

impl LoadReport {
    /// Whether an open-loop request left later than the stated bound.
    #[must_use]
    pub fn schedule_not_kept(&self) -> bool {
        self.warnings
            .iter()
            .any(|w| matches!(w, LoadWarning::ScheduleNotKept { .. }))
    }

    /// Whether any warning says the generator, not the server, was the limit.
    #[must_use]
    pub fn generator_bound(&self) -> bool {
        self.warnings
            .iter()
            .any(|w| matches!(w, LoadWarning::GeneratorBound { .. }))
    }

    /// Counts the responses below 400 outside the class of `expected` (a
    /// workload's `expect_status`) as errors of their own kind, and the
    /// error rate with them. The generator counts status classes, so the
    /// class is what every response is checked against; the exact code is
    /// checked on one answer before the first trial.
    pub fn count_unexpected_status(&mut self, expected: u16) {
        let s = self.status;
        let unexpected = match expected {
            100..=199 => s.success + s.redirection,
            200..=299 => s.informational + s.redirection,
            300..=399 => s.informational + s.success,
            // An expected error: every answer below 400 is unexpected.
            _ => s.informational + s.success + s.redirection,
        };
        self.errors.unexpected_status = unexpected;
        self.error_rate = self.errors.rate(self.requests);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_classes() {
        let mut s = StatusCounts::default();
        for code in [101, 200, 204, 301, 404, 503, 599, 0, 99, 600, 999] {
            s.count(code);
        }
        assert_eq!((s.success, s.client_error, s.server_error), (2, 1, 2));
        assert_eq!(s.total(), 7, "600, 999 and the rest are no HTTP status");
    }

    #[test]
    fn error_totals() {
        let e = ErrorCounts {
            connect: 1,
            timeout: 2,
            status_5xx: 3,
            ..ErrorCounts::default()
        };
        assert_eq!(e.transport(), 3);
        assert_eq!(e.total(), 6);
    }
}
