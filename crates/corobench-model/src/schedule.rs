//! The words every crate uses for how load is offered and by what: the
//! schedule (arrival pattern and connections), the generator's event-loop
//! backend, and the key that names a scenario.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::protocol::Protocol;

/// How requests arrive at the server.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ScheduleKind {
    /// N connections, each sends its next request when the previous response completes.
    Closed,
    /// A fixed arrival rate; latency is measured from each request's intended send time.
    Open { rate_per_s: f64 },
}

/// The most requests in flight on one connection (`pipeline`): far beyond
/// the 16 of TechEmpower's plaintext test, and small enough that the
/// per-connection record of send times stays a few kilobytes.
pub const MAX_PIPELINE: u32 = 1024;

/// The most HTTP/2 streams one connection may be asked to keep open
/// (`streams`, `-m`): servers allow 100 to 1000 by default, and each stream
/// holds a slot of a few dozen bytes in the generator.
pub const MAX_STREAMS: u32 = 65_536;

/// How load is offered in one scenario: the arrival pattern over a number of
/// connections, and how those connections carry requests. The spec resolves
/// it, the generator runs it, the store keeps it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    pub kind: ScheduleKind,
    pub connections: u32,
    /// Connections are reused for request after request (HTTP/1.1
    /// keep-alive); `false` opens a connection per request and closes it
    /// after the response, so the connect is part of every request.
    pub keepalive: bool,
    /// Requests in flight per connection (HTTP/1.1 pipelining); 1 waits for
    /// each response before sending the next request.
    pub pipeline: u32,
    /// What the connections speak: HTTP/1.1 or HTTP/2, over TCP or TLS.
    pub protocol: Protocol,
    /// HTTP/2 streams open at once on each connection (h2load's `-m`); 1
    /// for HTTP/1.1.
    pub streams: u32,
    /// Over TLS, new connections resume an earlier session (`true`, what
    /// clients do) or pay a full handshake each (`false`).
    pub tls_resume: bool,
}

impl Schedule {
    /// Each of `connections` sends its next request when the previous one is answered.
    #[must_use]
    pub fn closed(connections: u32) -> Self {
        Self {
            kind: ScheduleKind::Closed,
            connections,
            keepalive: true,
            pipeline: 1,
            protocol: Protocol::HTTP1,
            streams: 1,
            tls_resume: true,
        }
    }

    /// `rate_per_s` requests a second spread over `connections`.
    #[must_use]
    pub fn open(rate_per_s: f64, connections: u32) -> Self {
        Self {
            kind: ScheduleKind::Open { rate_per_s },
            connections,
            keepalive: true,
            pipeline: 1,
            protocol: Protocol::HTTP1,
            streams: 1,
            tls_resume: true,
        }
    }

    /// How its connections carry requests, as records keep it.
    #[must_use]
    pub fn wire(&self) -> WireMode {
        WireMode {
            keepalive: self.keepalive,
            pipeline: self.pipeline,
            streams: self.streams,
            tls_resume: self.tls_resume,
        }
    }

    /// The same schedule with a connection per request (`false`) or kept-alive ones.
    #[must_use]
    pub fn with_keepalive(self, keepalive: bool) -> Self {
        Self { keepalive, ..self }
    }

    /// The same schedule with up to `pipeline` requests in flight per connection.
    #[must_use]
    pub fn with_pipeline(self, pipeline: u32) -> Self {
        Self { pipeline, ..self }
    }

    /// The same schedule speaking `protocol`.
    #[must_use]
    pub fn with_protocol(self, protocol: Protocol) -> Self {
        Self { protocol, ..self }
    }

    /// The same schedule with `streams` HTTP/2 streams per connection.
    #[must_use]
    pub fn with_streams(self, streams: u32) -> Self {
        Self { streams, ..self }
    }

    /// The same schedule resuming TLS sessions (`true`) or not.
    #[must_use]
    pub fn with_tls_resume(self, tls_resume: bool) -> Self {
        Self { tls_resume, ..self }
    }

    /// The requested rate of an open loop.
    #[must_use]
    pub fn rate_per_s(&self) -> Option<f64> {
        match self.kind {
            ScheduleKind::Closed => None,
            ScheduleKind::Open { rate_per_s } => Some(rate_per_s),
        }
    }

    /// `c=64` or `rate=2000/c=64`, as used in scenario keys, followed by
    /// `/no-keepalive`, `/pipeline=N`, the protocol (`/tls`, `/h2`,
    /// `/h2c`), `/m=N` (HTTP/2 streams) and `/no-resume` (full TLS
    /// handshakes) only where they are not the default, so the keys of
    /// keep-alive, one-at-a-time, cleartext HTTP/1.1 scenarios (all stored
    /// before these existed) never change.
    #[must_use]
    pub fn key(&self) -> String {
        let mut key = match self.kind {
            ScheduleKind::Closed => format!("c={}", self.connections),
            ScheduleKind::Open { rate_per_s } => {
                format!("rate={rate_per_s}/c={}", self.connections)
            }
        };
        if !self.keepalive {
            key.push_str("/no-keepalive");
        }
        if self.pipeline != 1 {
            key.push_str(&format!("/pipeline={}", self.pipeline));
        }
        key.push_str(&self.protocol.key_suffix());
        if self.streams != 1 {
            key.push_str(&format!("/m={}", self.streams));
        }
        if !self.tls_resume {
            key.push_str("/no-resume");
        }
        key
    }

    /// `, no keep-alive`, `, pipeline 16` and `, tls` (or `h2`, `h2c`)
    /// where they are not the default, for headings and summaries; empty
    /// otherwise.
    #[must_use]
    pub fn wire_text(&self) -> String {
        let mut text = String::new();
        if !self.keepalive {
            text.push_str(", no keep-alive");
        }
        if self.pipeline != 1 {
            text.push_str(&format!(", pipeline {}", self.pipeline));
        }
        if !self.protocol.is_http1() {
            text.push_str(&format!(", {}", self.protocol));
        }
        if self.streams != 1 {
            text.push_str(&format!(", {} streams", self.streams));
        }
        if !self.tls_resume {
            text.push_str(", full handshakes");
        }
        text
    }
}

/// How a scenario's connections carried requests, as records keep it
/// (flattened into their JSON). Scenarios and reports made before it was
/// recorded were keep-alive and one request at a time; records of such runs
/// keep serialising as they did, without these keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireMode {
    /// `false`: a connection per request (see [`Schedule::keepalive`]).
    #[serde(
        default = "wire_serde::keepalive",
        skip_serializing_if = "wire_serde::is_keepalive"
    )]
    pub keepalive: bool,
    /// Requests in flight per connection (see [`Schedule::pipeline`]).
    #[serde(
        default = "wire_serde::pipeline",
        skip_serializing_if = "wire_serde::is_one_at_a_time"
    )]
    pub pipeline: u32,
    /// HTTP/2 streams per connection (see [`Schedule::streams`]).
    #[serde(
        default = "wire_serde::pipeline",
        skip_serializing_if = "wire_serde::is_one_at_a_time"
    )]
    pub streams: u32,
    /// `false`: every TLS connection paid a full handshake (see
    /// [`Schedule::tls_resume`]).
    #[serde(
        default = "wire_serde::keepalive",
        skip_serializing_if = "wire_serde::is_keepalive"
    )]
    pub tls_resume: bool,
}

impl Default for WireMode {
    fn default() -> Self {
        Self {
            keepalive: true,
            pipeline: 1,
            streams: 1,
            tls_resume: true,
        }
    }
}

mod wire_serde {
    pub(crate) fn keepalive() -> bool {
        true
    }

    pub(crate) fn pipeline() -> u32 {
        1
    }

    pub(crate) fn is_keepalive(keepalive: &bool) -> bool {
        *keepalive
    }

    pub(crate) fn is_one_at_a_time(pipeline: &u32) -> bool {
        *pipeline == 1
    }
}

/// The generator's event-loop implementation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// Readiness-based: edge-triggered epoll, one read and one write per request.
    #[default]
    Epoll,
    /// Completion-based: io_uring with batched submission.
    IoUring,
}

impl Backend {
    /// The name used in specs, flags, reports and provenance.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Epoll => "epoll",
            Self::IoUring => "io_uring",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The backend a user asked for: one of them, or the best this kernel allows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// io_uring where the kernel allows it, else epoll; decided once per run.
    #[default]
    Auto,
    Fixed(Backend),
}

impl BackendChoice {
    /// The words a spec or flag may use.
    pub const NAMES: [&'static str; 3] = ["auto", "epoll", "io_uring"];

    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Fixed(backend) => backend.name(),
        }
    }
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendChoice {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "auto" => Ok(Self::Auto),
            "epoll" => Ok(Self::Fixed(Backend::Epoll)),
            "io_uring" => Ok(Self::Fixed(Backend::IoUring)),
            other => Err(format!(
                "{other:?} must be \"auto\", \"epoll\" or \"io_uring\""
            )),
        }
    }
}

/// A scenario's stable, human-readable identity, e.g.
/// `go-ants/pool_size=64/queue_length=1024/plaintext/c=64`: the target, the
/// parameters given, the workload and the schedule. Resumes and comparisons
/// between runs match scenarios by it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ScenarioKey(String);

impl ScenarioKey {
    /// The key of target × parameters × workload × schedule.
    #[must_use]
    pub fn compose<'a>(
        target: &str,
        parameters: impl IntoIterator<Item = (&'a String, &'a String)>,
        workload: &str,
        schedule: &Schedule,
    ) -> Self {
        let mut key = target_and_parameters(target, parameters);
        key.push_str(&format!("/{workload}/{}", schedule.key()));
        Self(key)
    }

    /// The key of a program target run with `parameters`: it has no
    /// workload or schedule, e.g. `go-ants-tasks/pool_size=50/program`.
    #[must_use]
    pub fn program<'a>(
        target: &str,
        parameters: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Self {
        let mut key = target_and_parameters(target, parameters);
        key.push_str("/program");
        Self(key)
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// `go-ants/pool_size=64`: the start of every scenario key.
fn target_and_parameters<'a>(
    target: &str,
    parameters: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> String {
    let mut key = target.to_string();
    for (name, value) in parameters {
        key.push_str(&format!("/{name}={value}"));
    }
    key
}

impl From<String> for ScenarioKey {
    fn from(key: String) -> Self {
        Self(key)
    }
}

impl From<&str> for ScenarioKey {
    fn from(key: &str) -> Self {
        Self(key.to_string())
    }
}

impl PartialEq<str> for ScenarioKey {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl fmt::Display for ScenarioKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn schedule_kinds_serialise_with_a_kind_tag() {
        let open = serde_json::to_string(&ScheduleKind::Open { rate_per_s: 100.0 }).unwrap();
        assert_eq!(open, r#"{"kind":"open","rate_per_s":100.0}"#);
        let closed = serde_json::to_string(&ScheduleKind::Closed).unwrap();
        assert_eq!(closed, r#"{"kind":"closed"}"#);
    }

    #[test]
    fn keys_name_target_parameters_workload_and_schedule() {
        let parameters: BTreeMap<String, String> =
            [("pool_size".to_string(), "64".to_string())].into();
        let closed =
            ScenarioKey::compose("go-ants", &parameters, "plaintext", &Schedule::closed(64));
        assert_eq!(closed.as_str(), "go-ants/pool_size=64/plaintext/c=64");
        let open = ScenarioKey::compose("go-ants", [], "io", &Schedule::open(2000.0, 8));
        assert_eq!(open.to_string(), "go-ants/io/rate=2000/c=8");
        assert_eq!(
            serde_json::to_string(&open).unwrap(),
            r#""go-ants/io/rate=2000/c=8""#
        );
    }

    #[test]
    fn keys_name_the_wire_mode_only_when_it_is_not_the_default() {
        let short = Schedule::closed(1000).with_keepalive(false);
        assert_eq!(short.key(), "c=1000/no-keepalive");
        assert_eq!(short.wire_text(), ", no keep-alive");
        let pipelined = Schedule::closed(200).with_pipeline(16);
        assert_eq!(pipelined.key(), "c=200/pipeline=16");
        assert_eq!(pipelined.wire_text(), ", pipeline 16");
        let plain = Schedule::open(2000.0, 8)
            .with_keepalive(true)
            .with_pipeline(1);
        assert_eq!(plain.key(), "rate=2000/c=8");
        assert_eq!(plain.wire_text(), "");
    }

    #[test]
    fn keys_name_the_protocol_after_the_wire_mode_unless_cleartext_http1() {
        let tls = Schedule::closed(64).with_protocol(Protocol::TLS);
        assert_eq!(tls.key(), "c=64/tls");
        assert_eq!(tls.wire_text(), ", tls");
        let short = Schedule::closed(50)
            .with_keepalive(false)
            .with_protocol(Protocol::TLS);
        assert_eq!(short.key(), "c=50/no-keepalive/tls");
        let h2c = Schedule::open(100.0, 4).with_protocol(Protocol::H2C);
        assert_eq!(h2c.key(), "rate=100/c=4/h2c");
        let plain = Schedule::closed(64).with_protocol(Protocol::HTTP1);
        assert_eq!(plain.key(), "c=64");
    }

    #[test]
    fn backend_choices_round_trip_through_their_names() {
        for name in BackendChoice::NAMES {
            assert_eq!(name.parse::<BackendChoice>().unwrap().name(), name);
        }
        let err = "kqueue".parse::<BackendChoice>().unwrap_err();
        assert!(
            err.contains(r#"must be "auto", "epoll" or "io_uring""#),
            "{err}"
        );
    }
}
