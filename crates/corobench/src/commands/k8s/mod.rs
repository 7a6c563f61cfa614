//! `corobench k8s render|run SPEC`: a spec's trials on Kubernetes. `render`
//! writes manifests to apply by hand (the target as a pinned Pod running
//! `corobench serve`, the generators as an Indexed Job running `corobench
//! load --start-at`); `run` makes idle pods and runs the spec with the
//! runner of `corobench run`, its pods as the hosts, each trial stored.

pub mod render;
pub mod run;

use std::path::PathBuf;

use clap::{Args, Subcommand};
use corobench_engine::k8s::{LayoutError, LayoutOptions};
use corobench_engine::targets::Targets;
use corobench_spec::{Plan, PlannedScenario};

use super::shared::{TargetsDirArg, read_spec};
use crate::exit::{self, Exit};

/// Flags of `corobench k8s`.
#[derive(Debug, Args)]
pub struct K8sArgs {
    #[command(subcommand)]
    pub command: K8sCommand,
}

/// The `k8s` subcommands.
#[derive(Debug, Subcommand)]
pub enum K8sCommand {
    /// Write the manifests of each scenario's trial: target Pod, Service, generators' Job.
    Render(render::RenderArgs),
    /// Run a spec on the pods of a cluster, every trial stored like `corobench run`'s.
    Run(run::ClusterRunArgs),
}

/// Runs `corobench k8s`.
///
/// # Errors
/// As the subcommand.
pub fn run(args: &K8sArgs) -> anyhow::Result<Exit> {
    match &args.command {
        K8sCommand::Render(args) => render::run(args),
        K8sCommand::Run(args) => run::run(args),
    }
}

/// What `render` takes: the spec, which scenarios, and the cluster's pods.
#[derive(Clone, Debug, Args)]
pub struct LayoutArgs {
    /// Spec file (TOML) [default: the embedded default suite]
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,

    /// Only this scenario: its number or its key, as `corobench plan` lists them
    /// [default: every scenario]
    #[arg(long, value_name = "N|KEY")]
    pub scenario: Option<String>,

    #[command(flatten)]
    pub cluster: ClusterArgs,

    #[command(flatten)]
    pub dir: TargetsDirArg,
}

/// What `render` and `run` both take: the pods of a trial.
#[derive(Clone, Debug, Args)]
pub struct ClusterArgs {
    /// Generator pods; the scenario's connections and rate are split evenly among them
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=1000), value_name = "N")]
    pub generators: u32,

    /// Namespace of every object
    #[arg(long, default_value = "default", value_name = "NS")]
    pub namespace: String,

    /// Image with corobench and the targets, built from the repository's Containerfile
    #[arg(long, default_value = concat!("corobench:", env!("CARGO_PKG_VERSION")), value_parser = parse_image, value_name = "IMAGE")]
    pub image: String,

    /// Memory of the target Pod (requested and limited alike, for Guaranteed QoS)
    #[arg(long, default_value = "2Gi", value_parser = parse_memory, value_name = "QUANTITY")]
    pub server_memory: String,

    /// Memory of each generator pod
    #[arg(long, default_value = "1Gi", value_parser = parse_memory, value_name = "QUANTITY")]
    pub generator_memory: String,
}

impl ClusterArgs {
    /// What the flags choose about every layout and pod.
    pub(super) fn options(&self) -> LayoutOptions {
        LayoutOptions {
            namespace: self.namespace.clone(),
            image: self.image.clone(),
            generators: self.generators,
            server_memory: self.server_memory.clone(),
            generator_memory: self.generator_memory.clone(),
        }
    }
}

impl LayoutArgs {
    /// The spec resolved for a cluster: every target counts as available
    /// (the image carries it, not this machine), and CPU lists are checked
    /// only for their form, since the nodes are not this machine.
    fn plan(&self) -> anyhow::Result<Plan> {
        check_namespace(&self.cluster.namespace)?;
        let targets = Targets::discover(self.dir.targets_dir.as_deref())?;
        let path = self.spec.as_deref();
        let text = read_spec(path)?;
        let plan = targets.resolve_for_cluster(&text, path)?;
        if plan.capacity.is_some() {
            return Err(exit::usage(
                "the spec searches capacity ([capacity]), which a Kubernetes layout cannot run \
                 yet: each scenario would run once at start_rate, a fixed rate; run the search \
                 with `corobench run`, or give the rates to measure with `rates`",
            ));
        }
        Ok(plan)
    }

    /// The scenarios chosen with `--scenario`, or all of them.
    fn scenarios<'p>(&self, plan: &'p Plan) -> anyhow::Result<Vec<&'p PlannedScenario>> {
        let Some(wanted) = &self.scenario else {
            return Ok(plan.scenarios.iter().collect());
        };
        plan.scenarios
            .iter()
            .find(|s| s.index.to_string() == *wanted || s.key.to_string() == *wanted)
            .map(|s| vec![s])
            .ok_or_else(|| {
                exit::usage(format!(
                    "no scenario {wanted:?} in the spec (it has {}): give a number or key as \
                     `corobench plan` lists them",
                    plan.scenarios.len()
                ))
            })
    }
}

/// A scenario a layout cannot carry, refused with the flag that picks
/// another or changes the split.
pub(super) fn refused(error: LayoutError) -> anyhow::Error {
    let hint = match &error {
        LayoutError::Program { .. } => ": leave it out of the spec or pick another with --scenario",
        LayoutError::Database { .. } => ": pick a scenario without /db with --scenario",
        LayoutError::Uneven(_) => "; pass it with --generators",
        _ => "",
    };
    exit::usage(format!("{error}{hint}"))
}

/// `--image`: a name a container runtime can pull, so not empty and
/// without spaces or control characters.
fn parse_image(text: &str) -> Result<String, String> {
    if text.is_empty() || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{text:?} is not an image name: give one without spaces, e.g. \
             registry.example/corobench:1"
        ));
    }
    Ok(text.to_owned())
}

/// `--server-memory`, `--generator-memory`: a positive Kubernetes memory
/// quantity, a whole number with a binary (Ki, Mi, Gi, Ti) or decimal (k, M,
/// G, T) suffix or none (bytes); `2GB` or `-1Gi` would be refused by the
/// cluster only when the Pod is created.
fn parse_memory(text: &str) -> Result<String, String> {
    const SUFFIXES: [&str; 9] = ["Ki", "Mi", "Gi", "Ti", "k", "M", "G", "T", ""];
    let number = SUFFIXES
        .iter()
        .find_map(|suffix| text.strip_suffix(suffix))
        .unwrap_or(text);
    let positive = !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && number.bytes().any(|b| b != b'0');
    if positive {
        return Ok(text.to_owned());
    }
    Err(format!(
        "{text:?} is not a memory quantity: write a positive whole number with Ki, Mi, Gi, Ti \
         (or k, M, G, T), e.g. 2Gi or 512Mi"
    ))
}

/// A namespace must be a DNS label; saying so here beats kubectl's message
/// about the first object that carries it.
pub(super) fn check_namespace(namespace: &str) -> anyhow::Result<()> {
    let valid = !namespace.is_empty()
        && namespace.len() <= 63
        && namespace
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !namespace.starts_with('-')
        && !namespace.ends_with('-');
    if valid {
        Ok(())
    } else {
        Err(exit::usage(format!(
            "--namespace {namespace:?} is not a Kubernetes namespace name: at most 63 lowercase \
             letters, digits and '-', starting and ending with a letter or digit"
        )))
    }
}
