//! The targets a command can use, found once: their manifests, whether each
//! can run here, the catalog the spec resolver checks a spec against, and
//! choosing targets by name. Every command that names targets comes here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use corobench_model::Protocol;
use corobench_spec::{Catalog, CatalogProgram, CatalogTarget, Domain, Limits, Plan, SpecError};
use corobench_target::{
    Availability, Manifest, ParameterSpec, TargetError, discover, find_targets_dir, inline_servers,
};

use crate::error::EngineError;

/// The CPU numbers a spec may name when its trials run on other machines:
/// a bound on the form of a CPU list, not a claim about any node.
const CLUSTER_NODE_CPUS: usize = 1024;

/// Every discovered target, with its availability checked once.
#[derive(Debug)]
pub struct Targets {
    pub dir: PathBuf,
    /// Each manifest, whether it can run here, and whether the spec being
    /// resolved defined it (`[servers.NAME]`) rather than the folder.
    manifests: Vec<(Manifest, Availability, bool)>,
}

impl Targets {
    /// Finds the targets folder and reads every manifest in it.
    ///
    /// # Errors
    /// No targets folder, or a manifest that does not parse.
    pub fn discover(explicit: Option<&Path>) -> Result<Self, EngineError> {
        let dir = match find_targets_dir(explicit) {
            // Without a targets folder, a spec may still measure the
            // servers it defines itself.
            Err(TargetError::TargetsDirNotFound { .. }) if explicit.is_none() => {
                return Ok(Self {
                    dir: PathBuf::from("(no targets folder found)"),
                    manifests: Vec::new(),
                });
            }
            found => found?,
        };
        let manifests = discover(&dir)?;
        let manifests = manifests
            .into_iter()
            .map(|m| {
                let availability = m.availability();
                (m, availability, false)
            })
            .collect();
        Ok(Self { dir, manifests })
    }

    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Manifest> {
        self.manifests
            .iter()
            .find(|(m, _, _)| m.name == name)
            .map(|(m, _, _)| m)
    }

    /// The manifests named (in the order given, once each), or every one.
    ///
    /// # Errors
    /// An empty targets folder or an unknown name.
    pub fn select(&self, names: &[String]) -> Result<Vec<Manifest>, EngineError> {
        if self.manifests.is_empty() {
            return Err(EngineError::NoTargets {
                dir: self.dir.clone(),
            });
        }
        if names.is_empty() {
            return Ok(self.manifests.iter().map(|(m, _, _)| m.clone()).collect());
        }
        let mut chosen: Vec<Manifest> = Vec::new();
        for name in names {
            let manifest = self.get(name).ok_or_else(|| self.unknown(name))?;
            if !chosen.iter().any(|m| m.name == manifest.name) {
                chosen.push(manifest.clone());
            }
        }
        Ok(chosen)
    }

    fn unknown(&self, name: &str) -> EngineError {
        EngineError::UnknownTarget {
            name: name.to_owned(),
            dir: self.dir.clone(),
            known: self
                .manifests
                .iter()
                .map(|(m, _, _)| m.name.clone())
                .collect(),
        }
    }

    /// What the spec resolver needs to know.
    #[must_use]
    pub fn catalog(&self) -> Catalog {
        let cpus = corobench_target::CpuSet::allowed()
            .map_or(1, |set| set.iter().max().map_or(1, |max| max + 1));
        let targets = self
            .manifests
            .iter()
            .map(|(m, availability, _)| CatalogTarget {
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
                program: m.program().map(|p| CatalogProgram {
                    needs_server: p.needs_server(),
                    metrics: p.metrics.clone(),
                }),
                unserved: unserved(m),
            })
            .collect();
        Catalog { targets, cpus }
    }

    /// Resolves a spec against these targets, and the servers it defines
    /// itself (`[servers.NAME]`), and what this process can open. The
    /// spec's servers stay among the targets (those of an earlier spec go).
    ///
    /// # Errors
    /// As [`corobench_spec::resolve_within`], a server table that is not a
    /// valid server, one named like a target of the targets folder, or
    /// parameters a target refuses together.
    pub fn resolve(&mut self, text: &str, path: Option<&Path>) -> Result<Plan, EngineError> {
        self.add_spec_servers(text, path)?;
        let limits = Limits::of_this_process();
        let plan = corobench_spec::resolve_within(text, path, &self.catalog(), &limits)?;
        self.check_combinations(&plan, path)?;
        if plan.hosts.is_some() {
            self.refuse_spec_servers_across_hosts(&plan)?;
        }
        Ok(plan)
    }

    /// A run across hosts starts its servers with `corobench serve` on the
    /// server host, which knows that host's targets folder, not this spec.
    fn refuse_spec_servers_across_hosts(&self, plan: &Plan) -> Result<(), EngineError> {
        match self.spec_server_in(plan) {
            None => Ok(()),
            Some(name) => Err(EngineError::SpecServer {
                name: name.to_owned(),
                why: "a run with [hosts] starts each server with `corobench serve` on the server \
                      host, which knows only the targets folder there; make the server a target \
                      there (a target.toml with contract = false) and name it in `targets`"
                    .to_owned(),
            }),
        }
    }

    /// Each scenario's parameters as its manifest takes them together
    /// (`max_ms` at least `min_ms`): a combination the target would refuse
    /// fails every trial of the scenario, so the spec is refused first.
    fn check_combinations(&self, plan: &Plan, path: Option<&Path>) -> Result<(), EngineError> {
        self.refuse_fresh_only(plan)?;
        for scenario in &plan.scenarios {
            let Some(manifest) = self.get(&scenario.target) else {
                continue;
            };
            if let Err(error) = manifest.resolve_parameters(&scenario.parameters) {
                return Err(SpecError {
                    file: path
                        .map_or_else(|| "<default suite>".to_owned(), |p| p.display().to_string()),
                    position: None,
                    key: Some(format!("parameters.{}", scenario.target)),
                    message: format!("{error}; scenario {} cannot run", scenario.key),
                }
                .into());
            }
        }
        Ok(())
    }

    /// Memory per connection (`idle_connections`) and profiles measure a
    /// server started fresh for their trial: a server already running at a
    /// URL cannot have either, and every such trial would fail. Checked
    /// again once `--profile` is applied to a plan.
    ///
    /// # Errors
    /// The first server already running that the plan asks either of.
    pub fn refuse_fresh_only(&self, plan: &Plan) -> Result<(), EngineError> {
        for scenario in &plan.scenarios {
            let running = self
                .get(&scenario.target)
                .is_some_and(|manifest| manifest.attach.is_some());
            let asked = if scenario.workload.idle {
                format!(
                    "workload {} holds idle connections (idle_connections)",
                    scenario.workload.name
                )
            } else if plan.profile && scenario.program.is_none() {
                "the run profiles each scenario (profile = true)".to_owned()
            } else {
                continue;
            };
            if running {
                return Err(EngineError::SpecServer {
                    name: scenario.target.clone(),
                    why: format!(
                        "{asked}, which needs a server started fresh for its trial, and this one \
                         is already running at its url; give servers.{}.command so that \
                         corobench starts it, or measure it without that",
                        scenario.target
                    ),
                });
            }
        }
        Ok(())
    }

    /// Resolves a spec for machines other than this one (a cluster's nodes):
    /// every target counts as available, since the image carries it, and
    /// CPU lists are checked for their form only. The limits are the spec's
    /// own bounds, not this process's.
    ///
    /// # Errors
    /// As [`corobench_spec::resolve_within`], and a spec that defines its
    /// own servers: the image holds the reference targets, not a user's
    /// programs.
    pub fn resolve_for_cluster(
        &self,
        text: &str,
        path: Option<&Path>,
    ) -> Result<Plan, EngineError> {
        if let Some(server) = inline_servers(text, path)?.first() {
            return Err(EngineError::SpecServer {
                name: server.name.clone(),
                why: "a run on Kubernetes cannot start a server defined in the spec: the image \
                      carries the reference targets only; build an image with your server as a \
                      target (target.toml with contract = false) and name it in `targets`"
                    .to_owned(),
            });
        }
        let mut catalog = self.catalog();
        for target in &mut catalog.targets {
            target.available = Ok(());
        }
        catalog.cpus = CLUSTER_NODE_CPUS;
        Ok(corobench_spec::resolve_within(
            text,
            path,
            &catalog,
            &Limits::default(),
        )?)
    }

    /// The first server the resolved spec defines itself that `plan` measures.
    fn spec_server_in(&self, plan: &Plan) -> Option<&str> {
        self.manifests
            .iter()
            .filter(|(_, _, from_spec)| *from_spec)
            .map(|(manifest, _, _)| manifest.name.as_str())
            .find(|name| plan.scenarios.iter().any(|s| s.target == *name))
    }

    /// Puts the spec's own servers among the targets, in place of those of
    /// an earlier spec.
    fn add_spec_servers(&mut self, text: &str, path: Option<&Path>) -> Result<(), EngineError> {
        self.manifests.retain(|(_, _, from_spec)| !from_spec);
        for manifest in inline_servers(text, path)? {
            if self.get(&manifest.name).is_some() {
                return Err(EngineError::SpecServer {
                    why: format!(
                        "{} already has a target of that name; name the server otherwise",
                        self.dir.display()
                    ),
                    name: manifest.name,
                });
            }
            let availability = manifest.availability();
            self.manifests.push((manifest, availability, true));
        }
        Ok(())
    }

    /// Every parameter of `target`, defaults filled in for those not given.
    ///
    /// # Errors
    /// An unknown target or a value the manifest refuses.
    pub fn parameters(
        &self,
        target: &str,
        given: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, EngineError> {
        let manifest = self.get(target).ok_or_else(|| self.unknown(target))?;
        Ok(manifest.resolve_parameters(given)?)
    }
}

/// The protocols `manifest` does not serve, each with why: those its
/// `[protocols]` does not declare, and for a server already running, those
/// its URL's scheme does not speak (TLS for `https://`, cleartext else).
fn unserved(manifest: &Manifest) -> BTreeMap<Protocol, String> {
    Protocol::ALL
        .into_iter()
        .filter_map(|protocol| {
            if let Some(attached) = &manifest.attach {
                let https = attached.tls.is_some();
                if protocol.tls != https {
                    let speaks = if https { "TLS" } else { "cleartext" };
                    let why = format!("it runs at {}, which speaks {speaks}", attached.url);
                    return Some((protocol, why));
                }
                if !protocol.is_h2() {
                    return None;
                }
            }
            let reason = manifest.protocols.supports(protocol).err()?;
            Some((protocol, reason.to_owned()))
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corobench-target/tests/fixtures/targets")
    }

    fn names(manifests: &[Manifest]) -> Vec<&str> {
        manifests.iter().map(|m| m.name.as_str()).collect()
    }

    #[test]
    fn selection_keeps_the_given_order_once_and_rejects_unknown_names() {
        let targets = Targets::discover(Some(&fixtures())).unwrap();
        assert_eq!(targets.select(&[]).unwrap().len(), 10);
        let given = ["web", "built", "web"].map(String::from);
        assert_eq!(names(&targets.select(&given).unwrap()), ["web", "built"]);
        let error = targets.select(&["nope".to_string()]).unwrap_err();
        let message = format!("{error:#}");
        assert!(
            message.starts_with("no target named \"nope\" in "),
            "{message}"
        );
        assert!(message.ends_with(
            "targets there: built, crasher, deaf, env-dump, flaky-port, forker, silent, stubborn, \
             web, web-tls"
        ));
        assert!(
            matches!(error, EngineError::UnknownTarget { .. }),
            "{error:?}"
        );
    }

    #[test]
    fn a_missing_targets_dir_is_the_target_layer_s_error() {
        let error = Targets::discover(Some(Path::new("/nonexistent"))).unwrap_err();
        assert!(
            matches!(&error, EngineError::Target(target)
                if matches!(**target, TargetError::TargetsDirNotFound { .. })),
            "{error:?}"
        );
    }
}
