//! The spec file exactly as written: serde types that refuse unknown keys
//! and keep the position of every value a later check may reject.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// A whole spec file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSpec {
    pub name: Option<String>,
    pub description: Option<String>,
    /// `"available"` (default) or a list of target names.
    pub targets: Option<Spanned<RawTargets>>,
    /// Parameter values per target; a list sweeps every value.
    #[serde(default)]
    pub parameters: BTreeMap<String, BTreeMap<String, Spanned<RawValues>>>,
    #[serde(default)]
    pub run: RawRun,
    #[serde(default)]
    pub schedule: RawSchedule,
    #[serde(default)]
    pub workloads: Vec<RawWorkload>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RawTargets {
    Keyword(String),
    List(Vec<String>),
}

/// One value or a list of values (a sweep).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RawValues {
    One(RawScalar),
    Many(Vec<RawScalar>),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RawScalar {
    Integer(i64),
    Text(String),
    Bool(bool),
}

impl RawScalar {
    pub fn as_text(&self) -> String {
        match self {
            Self::Integer(n) => n.to_string(),
            Self::Text(s) => s.clone(),
            Self::Bool(b) => b.to_string(),
        }
    }
}

impl RawValues {
    pub fn values(&self) -> Vec<String> {
        match self {
            Self::One(v) => vec![v.as_text()],
            Self::Many(vs) => vs.iter().map(RawScalar::as_text).collect(),
        }
    }
}

/// How every trial runs.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRun {
    pub trials: Option<Spanned<i64>>,
    /// Adaptive trials: stop once every scenario's req/s CI is this tight, e.g. "3%".
    pub until_ci: Option<Spanned<String>>,
    pub max_trials: Option<Spanned<i64>>,
    pub duration: Option<Spanned<String>>,
    pub warmup: Option<Spanned<String>>,
    /// Quiet time after the load before the leak check.
    pub idle: Option<Spanned<String>>,
    pub timeout: Option<Spanned<String>>,
    pub server_cpus: Option<Spanned<String>>,
    pub generator_cpus: Option<Spanned<String>>,
    pub generator_threads: Option<Spanned<i64>>,
    pub backend: Option<Spanned<String>>,
    pub seed: Option<Spanned<i64>>,
}

/// Default schedule of every workload.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSchedule {
    /// Closed loop: one scenario per count. Open loop: the connection pool.
    pub connections: Option<Spanned<RawValues>>,
    /// Open loop: one scenario per rate (requests/s).
    pub rates: Option<Spanned<RawValues>>,
    /// `false`: a connection per request.
    pub keepalive: Option<Spanned<bool>>,
    /// Requests in flight per connection.
    pub pipeline: Option<Spanned<i64>>,
}

/// What is sent.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorkload {
    pub name: Spanned<String>,
    pub path: Spanned<String>,
    pub method: Option<Spanned<String>>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub body: Option<String>,
    pub body_file: Option<Spanned<String>>,
    pub connections: Option<Spanned<RawValues>>,
    pub rates: Option<Spanned<RawValues>>,
    pub keepalive: Option<Spanned<bool>>,
    pub pipeline: Option<Spanned<i64>>,
}
