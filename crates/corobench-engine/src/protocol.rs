//! The lines `corobench serve` prints on stdout, one JSON object each,
//! tagged by `event`: `hello` first (the protocol version, before any
//! build), `ready` once the target serves, a `sample` per resource sample,
//! `stopped` at the end, and an answer to each [`Order`] the coordinator
//! writes on its stdin (one JSON object a line, tagged by `order`). A
//! coordinator that reads a `hello` of another protocol version refuses the
//! peer, naming both versions. Over TLS (`serve --tls-stdin`), the first
//! line on stdin, before any order, is the run's [`Certificates`].

use std::collections::BTreeMap;

use corobench_model::{PoolCounters, ResourceSample, SideCounters, TrialFlag};
use serde::{Deserialize, Serialize};

/// The version of these messages; a change to their meaning bumps it.
pub const PROTOCOL_VERSION: u32 = 6;

/// One line of `corobench serve`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ServeEvent {
    Hello(Hello),
    Probe(Probe),
    Ready(Box<Ready>),
    Sample(Sample),
    Footprint(Footprint),
    Counters(Counters),
    Stopped(Stopped),
}

/// What the coordinator asks of `corobench serve`, one line each on its
/// stdin. Times are the server host's Unix milliseconds; an order whose
/// time has passed (or that names none) is carried out at once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "order", rename_all = "snake_case")]
pub enum Order {
    /// The target's footprint (the leak check's figures), answered by a
    /// `footprint` line with the same id.
    Footprint { id: u32, at_unix_ms: Option<i64> },
    /// The kernel counters of the target's process group (those of local
    /// trials) from one instant to another, answered by a `counters` line
    /// at the second.
    Count { from_unix_ms: i64, to_unix_ms: i64 },
}

impl Order {
    /// When it is due, if it names a time.
    #[must_use]
    pub fn due_unix_ms(&self) -> Option<i64> {
        match self {
            Self::Footprint { at_unix_ms, .. } => *at_unix_ms,
            Self::Count { from_unix_ms, .. } => Some(*from_unix_ms),
        }
    }
}

/// The run's certificates as PEM text: the first line the coordinator
/// writes on the stdin of `serve --tls-stdin`, so that the target on the
/// server host serves the leaf the generators trust, and no key is left in
/// a file or on a command line there beyond the trial's own folder.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Certificates {
    pub ca: String,
    pub cert: String,
    pub key: String,
}

impl Certificates {
    /// The text of the run's certificate files.
    ///
    /// # Errors
    /// A file cannot be read.
    pub fn read(files: &corobench_target::TlsFiles) -> std::io::Result<Self> {
        let text = std::fs::read_to_string;
        Ok(Self {
            ca: text(&files.ca)?,
            cert: text(&files.cert)?,
            key: text(&files.key)?,
        })
    }

    /// A throwaway authority and a leaf for loopback and `names`, never
    /// written to a file here: what a Kubernetes layout puts in its Secret.
    ///
    /// # Errors
    /// A name that is neither an address nor a DNS name.
    pub fn throwaway(names: &[String]) -> Result<Self, Box<corobench_target::TargetError>> {
        let (ca, cert, key) = corobench_target::RunCertificates::pem_naming(names)?;
        Ok(Self { ca, cert, key })
    }
}

/// Never the key, in any message.
impl std::fmt::Debug for Certificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Certificates")
            .field("ca", &format_args!("{} bytes", self.ca.len()))
            .field("cert", &format_args!("{} bytes", self.cert.len()))
            .finish_non_exhaustive()
    }
}

/// What the target held at one moment: its process group's size, and the
/// tasks its `/stats` reports (when it serves the contract and answers).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Footprint {
    /// The id of the order it answers.
    pub id: u32,
    pub unix_ms: i64,
    pub tasks: Option<u64>,
    pub processes: u32,
    pub threads: u32,
    pub rss_bytes: u64,
    /// The database pool's own counters from the target's `/stats`, when
    /// it reports a pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolCounters>,
    /// Why the process group could not be read (its figures are then 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The first line: which protocol and which corobench speak.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    pub corobench_version: String,
}

impl Hello {
    /// This corobench's hello.
    #[must_use]
    pub fn ours() -> Self {
        Self {
            protocol: PROTOCOL_VERSION,
            corobench_version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }

    /// Why a peer that said this cannot be talked to, if it cannot.
    #[must_use]
    pub fn refusal(&self, peer: &str) -> Option<String> {
        (self.protocol != PROTOCOL_VERSION).then(|| {
            format!(
                "{peer} speaks protocol {} (corobench {}) and this corobench protocol {} \
                 (corobench {}): run the same corobench on every host",
                self.protocol,
                self.corobench_version,
                PROTOCOL_VERSION,
                env!("CARGO_PKG_VERSION")
            )
        })
    }
}

/// With `serve --probe`: the machine-speed probe on the target's CPUs,
/// run once built and before it starts (MB of SHA-256 per second per CPU),
/// or why it could not run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub mb_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The target serves: where, and what exactly runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ready {
    pub target: String,
    pub url: String,
    pub addr: String,
    pub port: u16,
    pub listen: String,
    pub pid: i32,
    pub pgid: i32,
    pub model: String,
    pub source_hash: String,
    pub tool_versions: BTreeMap<String, String>,
    pub parameters: BTreeMap<String, String>,
    pub cpus: Option<String>,
    pub verified: bool,
    pub corobench_version: String,
    pub unix_ms: i64,
}

/// One resource sample of the target's process group, by the server
/// host's clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub unix_ms: i64,
    #[serde(flatten)]
    pub sample: ResourceSample,
}

/// What the target's process group cost the kernel over the span a
/// `count` order named (counters attached to every thread when it began,
/// with inheritance); the counters the kernel refused, with the reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub from_unix_ms: i64,
    pub to_unix_ms: i64,
    #[serde(flatten)]
    pub counted: SideCounters,
}

/// The target stopped, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stopped {
    pub reason: String,
    pub exit_status: Option<String>,
    pub needed_sigkill: bool,
    /// Set when the target ignored its stop signal until SIGKILL: what a
    /// trial keeps as its `killed_at_stop` flag (absent from older serves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub killed_at_stop: Option<KilledAtStop>,
    pub unix_ms: i64,
}

/// The stop signal the target ignored, and how long the stop waited
/// before SIGKILL ended it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KilledAtStop {
    pub signal: String,
    pub waited_ms: u64,
}

impl KilledAtStop {
    /// The trial's flag.
    #[must_use]
    pub fn flag(&self) -> TrialFlag {
        TrialFlag::KilledAtStop {
            signal: self.signal.clone(),
            waited_s: self.waited_ms as f64 / 1e3,
        }
    }
}

impl ServeEvent {
    /// The line as printed.
    #[must_use]
    pub fn line(&self) -> String {
        to_line(self)
    }

    /// A line as read; `None` for anything that is not one of these
    /// messages (a stray line of the remote shell).
    #[must_use]
    pub fn parse(line: &str) -> Option<Self> {
        from_line(line)
    }
}

/// A message as one JSON line (these types always serialise): how an
/// [`Order`] is written.
#[must_use]
pub fn to_line(message: &impl Serialize) -> String {
    serde_json::to_string(message).unwrap_or_default()
}

/// A line as one message, or `None` for anything else: how an [`Order`]
/// is read.
#[must_use]
pub fn from_line<T: serde::de::DeserializeOwned>(line: &str) -> Option<T> {
    serde_json::from_str(line.trim()).ok()
}

/// The `stopped` line of a target that ignored SIGTERM for 5.02 s.
#[cfg(test)]
pub(crate) fn killed_at_stop_line() -> ServeEvent {
    ServeEvent::Stopped(Stopped {
        reason: "stdin closed".into(),
        exit_status: None,
        needed_sigkill: true,
        killed_at_stop: Some(KilledAtStop {
            signal: "SIGTERM".into(),
            waited_ms: 5020,
        }),
        unix_ms: 5,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_reads_back_as_written() {
        let stopped = killed_at_stop_line();
        let hello = ServeEvent::Hello(Hello::ours());
        let footprint = ServeEvent::Footprint(Footprint {
            id: 3,
            unix_ms: 9,
            tasks: None,
            processes: 1,
            threads: 2,
            rss_bytes: 4096,
            pool: None,
            error: None,
        });
        let counters = ServeEvent::Counters(Counters {
            from_unix_ms: 1,
            to_unix_ms: 2,
            counted: SideCounters::refused(corobench_model::Side::Server, "paranoid"),
        });
        for event in [stopped, hello, footprint, counters] {
            let line = event.line();
            assert!(line.starts_with("{\"event\":"), "{line}");
            assert_eq!(ServeEvent::parse(&line), Some(event));
        }
        let sample = ServeEvent::parse(
            "{\"event\":\"sample\",\"unix_ms\":7,\"t_ms\":0,\"cpu_user_pct\":1.0,\
             \"cpu_system_pct\":0.5,\"rss_bytes\":10,\"threads\":2,\"processes\":1,\
             \"ctx_voluntary\":3,\"ctx_involuntary\":4}",
        );
        assert!(
            matches!(sample, Some(ServeEvent::Sample(Sample { unix_ms: 7, .. }))),
            "{sample:?}"
        );
        assert_eq!(ServeEvent::parse("Welcome to the host"), None);
    }

    #[test]
    fn an_order_reads_back_as_written_and_says_when_it_is_due() {
        let order = Order::Footprint {
            id: 2,
            at_unix_ms: Some(1_700_000_000_000),
        };
        let line = to_line(&order);
        assert!(line.starts_with("{\"order\":\"footprint\""), "{line}");
        assert_eq!(from_line(&line), Some(order.clone()));
        assert_eq!(order.due_unix_ms(), Some(1_700_000_000_000));
        assert_eq!(from_line::<Order>("{\"event\":\"ready\"}"), None);
    }

    #[test]
    fn a_peer_of_another_protocol_is_refused_naming_both_versions() {
        assert_eq!(Hello::ours().refusal("ssh://a"), None);
        let old = Hello {
            protocol: PROTOCOL_VERSION + 1,
            corobench_version: "9.9.9".into(),
        };
        let why = old.refusal("corobench serve on ssh://a").unwrap();
        assert!(
            why.contains(&format!("speaks protocol {}", PROTOCOL_VERSION + 1)),
            "{why}"
        );
        assert!(
            why.contains(&format!("this corobench protocol {PROTOCOL_VERSION}")),
            "{why}"
        );
        assert!(why.contains("9.9.9"), "{why}");
    }
}
