//! `corobench k8s render SPEC -o DIR`: the manifests of each scenario's
//! trial, one folder per scenario, for `kubectl apply -f`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;
use corobench_engine::k8s::manifests::{
    JOB_NAME, Layout, START_AT_CONFIG_MAP, START_AT_KEY, TARGET_NAME,
};
use corobench_engine::k8s::pods::{POD_LIFETIME, PodLayout};
use corobench_engine::k8s::tls::THROWAWAY_NOTE;
use corobench_engine::k8s::{LayoutOptions, layout};
use corobench_spec::Plan;
use serde_json::Value;

use super::LayoutArgs;
use crate::exit::{self, Exit};
use crate::values;

/// Flags of `corobench k8s render`.
#[derive(Debug, Args)]
#[command(after_help = "Each scenario gets a folder DIR/scenario-N with:\n  \
    05-tls-secret.json  over TLS (tls, h2): a throwaway authority and the target's certificate\n                      \
    and key, made for this trial; private, delete it with the trial\n  \
    10-service.json     the headless Service generators reach the target through\n  \
    20-target.json      the target Pod: corobench serve, Guaranteed QoS, whole CPUs\n  \
    30-generators.json  the Indexed Job: one corobench load --json --start-at per pod\n  \
    25-start-at.json    the ConfigMap with T (only with --start-at)\n\
    With --pods, DIR/run-pods holds the idle pods `corobench k8s run` makes.\n\n\
    Examples:\n  \
    corobench k8s render spec.toml --generators 4 --image registry.example/corobench:1 -o k8s\n  \
    corobench k8s render spec.toml --scenario 3 --start-at 2026-11-24T08:00:00Z")]
pub struct RenderArgs {
    #[command(flatten)]
    pub layout: LayoutArgs,

    /// The folder to write into (created if missing; files of the same name are replaced)
    #[arg(short = 'o', long, default_value = "k8s", value_name = "DIR")]
    pub output: PathBuf,

    /// Also write the ConfigMap that starts the generators at this instant
    /// (UTC RFC 3339 or Unix seconds, as `corobench load --start-at` takes it)
    #[arg(long, value_parser = parse_start_at, value_name = "INSTANT")]
    pub start_at: Option<String>,

    /// Also write the idle pods `corobench k8s run` makes for this spec, one
    /// file each, into DIR/run-pods
    #[arg(long)]
    pub pods: bool,
}

/// Runs `corobench k8s render`.
///
/// # Errors
/// A spec that does not resolve, no scenario that a Pod layout can run
/// (exit 2), or a folder that cannot be written.
pub fn run(args: &RenderArgs) -> anyhow::Result<Exit> {
    if args.output.exists() && !args.output.is_dir() {
        return Err(exit::usage(format!(
            "-o {}: is a file; name a folder to write the manifests into",
            args.output.display()
        )));
    }
    let plan = args.layout.plan()?;
    let options = args.layout.cluster.options();
    let mut written = Vec::new();
    let mut refused = Vec::new();
    let mut out = std::io::stdout().lock();
    for scenario in args.layout.scenarios(&plan)? {
        match layout(&plan, scenario, &options).map_err(super::refused) {
            Ok(layout) => {
                let dir = args.output.join(format!("scenario-{}", scenario.index));
                let files = write_layout(&dir, &layout, args.start_at.as_deref())?;
                writeln!(out, "{}: {}", dir.display(), scenario.key)?;
                if files.contains(&SECRET_FILE) {
                    writeln!(out, "  {SECRET_FILE} holds {THROWAWAY_NOTE}")?;
                }
                written.push((scenario.index, files));
            }
            Err(error) if args.layout.scenario.is_some() => return Err(error),
            Err(error) => refused.push(format!("{error:#}")),
        }
    }
    // A target left out over a protocol it does not declare, said as `run` says it.
    for skipped in &plan.skipped_protocols {
        eprintln!("{}", skipped.line());
    }
    for reason in &refused {
        eprintln!("skipped: {reason}");
    }
    if args.pods {
        let dir = args.output.join("run-pods");
        write_pods(&dir, &plan, &options)?;
        writeln!(out, "{}: the pods of `corobench k8s run`", dir.display())?;
    }
    let Some((first, files)) = written.first() else {
        return Err(exit::usage(
            "no scenario of the spec can run as a Kubernetes layout (reasons above)",
        ));
    };
    write!(out, "{}", next_steps(args, *first, files))?;
    Ok(Exit::Success)
}

/// The file of the Secret, over TLS.
const SECRET_FILE: &str = "05-tls-secret.json";

/// The manifests of one layout, each object in its own file, named so that
/// `kubectl apply -f DIR` applies them in a working order.
pub fn files(layout: &Layout, start_at: Option<&str>) -> Vec<(&'static str, Value)> {
    let mut files: Vec<(&'static str, Value)> = layout
        .tls_secret()
        .map(|secret| (SECRET_FILE, secret))
        .into_iter()
        .collect();
    files.push(("10-service.json", layout.service()));
    files.push(("20-target.json", layout.target_pod()));
    if let Some(start_at) = start_at {
        files.push(("25-start-at.json", layout.start_at_config_map(start_at)));
    }
    files.push(("30-generators.json", layout.generator_job()));
    files
}

/// Writes the manifests of `layout` into `dir`; the names of their files.
fn write_layout(
    dir: &Path,
    layout: &Layout,
    start_at: Option<&str>,
) -> anyhow::Result<Vec<&'static str>> {
    let files = files(layout, start_at);
    let names = files.iter().map(|(name, _)| *name).collect();
    write_objects(
        dir,
        files
            .into_iter()
            .map(|(name, object)| (name.to_string(), object)),
    )?;
    Ok(names)
}

/// The pods of `k8s run`, as it would make them with the default lifetime.
fn write_pods(dir: &Path, plan: &Plan, cluster: &LayoutOptions) -> anyhow::Result<()> {
    let lifetime = corobench_spec::parse_duration(POD_LIFETIME)?;
    let pods = PodLayout::for_plan(plan, cluster, lifetime);
    let files = pods
        .names()
        .into_iter()
        .zip(pods.objects())
        .enumerate()
        .map(|(i, (name, object))| (format!("{i:02}-{name}.json"), object));
    write_objects(dir, files)
}

/// Each object in a file of its own, pretty JSON.
fn write_objects(dir: &Path, files: impl Iterator<Item = (String, Value)>) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, object) in files {
        let path = dir.join(name);
        let mut text = serde_json::to_string_pretty(&object)?;
        text.push('\n');
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// How to run what was written by hand (`corobench k8s run` does the same):
/// scenario `first`, whose files are `files`.
fn next_steps(args: &RenderArgs, first: u32, files: &[&str]) -> String {
    let dir = args.output.join(format!("scenario-{first}"));
    let dir = dir.display();
    let secret = if files.contains(&SECRET_FILE) {
        format!("-f {dir}/{SECRET_FILE} ")
    } else {
        String::new()
    };
    let ns = &args.layout.cluster.namespace;
    let start = if args.start_at.is_some() {
        String::new()
    } else {
        format!(
            "  kubectl -n {ns} create configmap {START_AT_CONFIG_MAP} --from-literal={START_AT_KEY}=$(( $(date +%s) + 20 ))\n"
        )
    };
    format!(
        "\nTo run scenario {first} by hand (`corobench k8s run` runs the whole spec on pods\nand stores its trials):\n  \
         kubectl apply {secret}-f {dir}/10-service.json -f {dir}/20-target.json\n  \
         kubectl -n {ns} wait --for=condition=Ready pod/{TARGET_NAME} --timeout=15m\n\
         {start}  kubectl apply -f {dir}/30-generators.json\n  \
         kubectl -n {ns} wait --for=condition=Complete job/{JOB_NAME} --timeout=30m\n  \
         for p in $(kubectl -n {ns} get pods -l job-name={JOB_NAME} -o name); do kubectl -n {ns} logs $p | sed -n '/^{{$/,/^}}$/p' > ${{p#pod/}}.json; done\n  \
         corobench merge {JOB_NAME}-*.json\n  \
         kubectl -n {ns} delete pod,service,job,configmap,secret -l app.kubernetes.io/name=corobench\n"
    )
}

/// `--start-at`: read as `corobench load` reads it, kept as written; an
/// instant already past (`0` is 1970) would start every generator late and
/// without warm-up.
fn parse_start_at(text: &str) -> Result<String, String> {
    let instant = values::parse_instant(text)?;
    if instant < std::time::SystemTime::now() {
        return Err(format!(
            "{text:?} has already passed: give an instant ahead of when the manifests will be \
             applied, e.g. $(( $(date +%s) + 60 ))"
        ));
    }
    Ok(text.trim().to_string())
}
