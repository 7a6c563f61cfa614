//! What the resolver knows about targets and the machine. The binary builds
//! this from the target manifests, so this crate reads nothing but the spec.

use std::collections::BTreeMap;
use std::time::Duration;

use corobench_model::Protocol;

use crate::values::ValueError;

/// The values a target parameter accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Domain {
    Integer { min: i64, max: i64 },
    Choice(Vec<String>),
}

impl Domain {
    /// Checks one value; the error says what is allowed.
    ///
    /// # Errors
    /// A value outside the domain.
    pub fn check(&self, value: &str) -> Result<(), ValueError> {
        self.canonical(value).map(|_| ())
    }

    /// The value in the one spelling scenario keys use (`+050` is `50`), so
    /// that two spellings of one value are seen as the same value.
    ///
    /// # Errors
    /// A value outside the domain.
    pub fn canonical(&self, value: &str) -> Result<String, ValueError> {
        match self {
            Self::Integer { min, max } => match value.trim().parse::<i64>() {
                Ok(n) if (*min..=*max).contains(&n) => Ok(n.to_string()),
                _ => Err(ValueError::OutOfRange {
                    min: *min,
                    max: *max,
                }),
            },
            Self::Choice(choices) if choices.iter().any(|c| c == value) => Ok(value.to_string()),
            Self::Choice(choices) => Err(ValueError::NotAChoice(choices.clone())),
        }
    }
}

/// One target as the resolver sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogTarget {
    pub name: String,
    /// `Err(reason)` when it cannot run on this machine.
    pub available: Result<(), String>,
    pub parameters: BTreeMap<String, Domain>,
    /// The shortest warm-up its trials get (its manifest's `min_warmup_s`);
    /// a spec's shorter warm-up is raised to it for this target only.
    pub min_warmup: Duration,
    /// Set for a program target: it runs to completion instead of serving.
    pub program: Option<CatalogProgram>,
    /// Protocols it does not serve, each with why (its manifest's words);
    /// cleartext HTTP/1.1 is served by every target.
    pub unserved: BTreeMap<Protocol, String>,
}

/// What the resolver needs to know of a program target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogProgram {
    /// It talks to a server the spec must name.
    pub needs_server: bool,
    /// The units of the figures it reports (`tasks/s`, `B/op`): what a
    /// claim about it may name.
    pub metrics: Vec<String>,
}

/// Every known target, plus the machine's CPU count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Catalog {
    pub targets: Vec<CatalogTarget>,
    pub cpus: usize,
}

impl Catalog {
    pub(crate) fn get(&self, name: &str) -> Option<&CatalogTarget> {
        self.targets.iter().find(|t| t.name == name)
    }

    pub(crate) fn names(&self) -> String {
        self.targets
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}
