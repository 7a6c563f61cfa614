//! Proves that a running target honours `docs/contract.md`.
//!
//! [`verify`] checks every rule the contract names in bold against a target
//! at an address, in the protocol it serves (HTTP/1.1 or HTTP/2, over TLS or
//! not), and returns one [`RuleResult`] per rule, in the order of
//! [`rules_for`] that protocol ([`RULES`] for cleartext HTTP/1.1). Every message names the rule, the request, what was expected
//! and what came back. The slowest rule (date-not-cached, which must wait
//! 1.5 s) runs on its own thread while the others run.
//!
//! The `sigterm` rule needs the target's process and is checked by whoever
//! stops it; `/db` is checked against the database through a
//! [`DatabaseProbe`] when one runs.

pub mod client;
mod date;
mod frames;
pub mod h2client;
mod rules;
pub mod transport;

use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use corobench_target::TlsFiles;
use serde::Serialize;

pub use corobench_target::Protocol;
pub use date::parse_imf_fixdate;
pub use rules::{H2_RULES, HTTP1_ONLY_RULES, RULES, TLS_RULES, rules_for, verify};

/// Reads the `world` table the target serves `/db` from. The db rule runs
/// on its own thread (its counter may lag by seconds), hence `Sync`.
pub trait DatabaseProbe: Sync {
    /// The `randomnumber` of row `id`, or `None` when there is no such row.
    ///
    /// # Errors
    /// The database could not be queried.
    fn random_number(&self, id: i32) -> Result<Option<i32>, ProbeError>;

    /// Reads of `world` so far (sequential plus index scans). It may lag the
    /// real count by the database's statistics delay; the verifier polls.
    ///
    /// # Errors
    /// The database could not be queried.
    fn world_reads(&self) -> Result<u64, ProbeError>;
}

/// A database probe that could not answer; the text says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProbeError(pub String);

/// What the verifier needs to know about the target.
#[derive(Clone, Copy)]
pub struct VerifyConfig<'a> {
    /// Where the target listens.
    pub addr: SocketAddr,
    /// The target's name: its `Server` header must carry it.
    pub target_name: &'a str,
    /// The `model` of its manifest: `/stats` must report it.
    pub model: &'a str,
    /// The database `/db` reads from; `None` when no database runs, and then
    /// `/db` must answer `503`.
    pub database: Option<&'a dyn DatabaseProbe>,
    /// How long an ordinary response may take.
    pub timeout: Duration,
    /// Set (by Ctrl-C) to stop checking: the rules not yet checked are
    /// reported as interrupted rather than waited for.
    pub cancel: Option<&'a AtomicBool>,
    /// What the target serves (cleartext HTTP/1.1 unless set).
    pub protocol: Protocol,
    /// The certificates the target was given: required over TLS, where its
    /// authority is the only one trusted and its leaf the one expected.
    pub tls: Option<&'a TlsFiles>,
}

impl fmt::Debug for VerifyConfig<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifyConfig")
            .field("addr", &self.addr)
            .field("target_name", &self.target_name)
            .field("model", &self.model)
            .field("database", &self.database.is_some())
            .field("timeout", &self.timeout)
            .field("protocol", &self.protocol)
            .field("tls", &self.tls)
            .finish()
    }
}

impl<'a> VerifyConfig<'a> {
    /// A configuration without a database and with a 5 s response timeout.
    #[must_use]
    pub fn new(addr: SocketAddr, target_name: &'a str, model: &'a str) -> Self {
        Self {
            addr,
            target_name,
            model,
            database: None,
            timeout: Duration::from_secs(5),
            cancel: None,
            protocol: Protocol::HTTP1,
            tls: None,
        }
    }

    /// Whether checking was asked to stop.
    #[must_use]
    pub fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

/// The verdict on one rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", content = "message", rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    /// Not a violation, or not checkable because another rule failed; the
    /// message says which.
    Warn(String),
    Fail(String),
}

/// One rule and its verdict. Messages start with the rule's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleResult {
    pub rule: &'static str,
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl RuleResult {
    #[must_use]
    pub fn is_fail(&self) -> bool {
        matches!(self.outcome, Outcome::Fail(_))
    }

    #[must_use]
    pub fn is_pass(&self) -> bool {
        self.outcome == Outcome::Pass
    }

    /// The message of a warning or failure.
    #[must_use]
    pub fn message(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Pass => None,
            Outcome::Warn(message) | Outcome::Fail(message) => Some(message),
        }
    }
}
