//! The targets a run can use: their manifests, whether each can run here,
//! and the catalog the spec resolver checks a spec against.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use corobench_spec::{Catalog, CatalogTarget, Domain};
use corobench_target::{Availability, Manifest, ParameterSpec, discover, find_targets_dir};

use crate::exit;

/// Every discovered target, with its availability checked once.
#[derive(Debug)]
pub struct Targets {
    pub dir: PathBuf,
    manifests: Vec<(Manifest, Availability)>,
}

impl Targets {
    /// Finds the targets folder and reads every manifest in it.
    ///
    /// # Errors
    /// No targets folder, or a manifest that does not parse (exit 2).
    pub fn discover(explicit: Option<&Path>) -> anyhow::Result<Self> {
        let dir = find_targets_dir(explicit).map_err(|e| exit::usage(e.to_string()))?;
        let manifests = discover(&dir).map_err(|e| exit::usage(e.to_string()))?;
        let manifests = manifests
            .into_iter()
            .map(|m| {
                let availability = m.availability();
                (m, availability)
            })
            .collect();
        Ok(Self { dir, manifests })
    }

    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Manifest> {
        self.manifests
            .iter()
            .find(|(m, _)| m.name == name)
            .map(|(m, _)| m)
    }

    /// What the spec resolver needs to know.
    #[must_use]
    pub fn catalog(&self) -> Catalog {
        let cpus = corobench_target::CpuSet::allowed()
            .map_or(1, |set| set.iter().max().map_or(1, |max| max + 1));
        let targets = self
            .manifests
            .iter()
            .map(|(m, availability)| CatalogTarget {
                name: m.name.clone(),
                available: match availability {
                    Availability::Available => Ok(()),
                    Availability::Unavailable { reason, hint } => Err(hint
                        .as_ref()
                        .map_or_else(|| reason.clone(), |hint| format!("{reason} ({hint})"))),
                },
                parameters: m
                    .parameters
                    .iter()
                    .map(|(name, spec)| (name.clone(), domain(spec)))
                    .collect(),
                min_warmup: m.run.min_warmup(),
            })
            .collect();
        Catalog { targets, cpus }
    }

    /// Every parameter of `target`, defaults filled in for those not given.
    ///
    /// # Errors
    /// An unknown target or a value the manifest refuses (exit 2).
    pub fn parameters(
        &self,
        target: &str,
        given: &BTreeMap<String, String>,
    ) -> anyhow::Result<BTreeMap<String, String>> {
        let manifest = self
            .get(target)
            .ok_or_else(|| exit::usage(format!("unknown target {target:?}")))?;
        manifest
            .resolve_parameters(given)
            .map_err(|e| exit::usage(e.to_string()))
    }
}

fn domain(spec: &ParameterSpec) -> Domain {
    match spec {
        ParameterSpec::Integer { min, max, .. } => Domain::Integer {
            min: *min,
            max: *max,
        },
        ParameterSpec::Choice { choices, .. } => Domain::Choice(choices.clone()),
    }
}
