//! `corobench targets list|build`: what targets exist, whether they can run
//! here and are built, and building them into the cache.

use std::io::Write;
use std::time::Instant;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use corobench_engine::targets::Targets;
use corobench_target::{
    Availability, BuildCache, BuildOutcome, Manifest, install_child_reaper, listing,
};

use super::shared::TargetsDirArg;
use crate::exit::{self, Exit};

/// Flags of `corobench targets`.
#[derive(Debug, Args)]
pub struct TargetsArgs {
    #[command(subcommand)]
    pub command: TargetsCommand,
}

#[derive(Debug, Subcommand)]
pub enum TargetsCommand {
    /// Every target: model, language, whether it can run here, whether it is
    /// built, and its parameters with their defaults.
    #[command(after_help = "Examples:\n  corobench targets list\n  corobench targets list --json")]
    List(ListArgs),
    /// Build targets into the cache (default: every available one); sources
    /// already built are not built again.
    #[command(
        after_help = "Exit status: 0 every requested target is built (unavailable ones are \
        skipped), 3 a build failed.\n\nExamples:\n  \
        corobench targets build\n  \
        corobench targets build go-nethttp rust-axum"
    )]
    Build(BuildArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub dir: TargetsDirArg,

    /// Print the list as JSON on stdout instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Targets to build [default: every available target]
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,

    #[command(flatten)]
    pub dir: TargetsDirArg,
}

/// Runs `corobench targets ...`.
///
/// # Errors
/// A bad targets folder, manifest or name (exit 2), a failed build (exit 3).
pub fn run(args: &TargetsArgs) -> anyhow::Result<Exit> {
    let mut stdout = std::io::stdout().lock();
    match &args.command {
        TargetsCommand::List(list_args) => {
            let manifests = Targets::discover(list_args.dir.targets_dir.as_deref())?.select(&[])?;
            let cache = BuildCache::from_env().context("choosing the build cache")?;
            list(&manifests, &cache, list_args.json, &mut stdout)?;
            Ok(Exit::Success)
        }
        TargetsCommand::Build(build_args) => {
            let manifests = Targets::discover(build_args.dir.targets_dir.as_deref())?
                .select(&build_args.names)?;
            let cache = BuildCache::from_env().context("choosing the build cache")?;
            // Grandchildren of a build whose parent dies are ours to reap.
            let _ = install_child_reaper();
            build(&manifests, &cache, &mut stdout)
        }
    }
}

fn list(
    manifests: &[Manifest],
    cache: &BuildCache,
    json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let listings = listing::listings(manifests, cache);
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&listings)?)?;
    } else {
        write!(out, "{}", listing::table(&listings))?;
    }
    Ok(())
}

/// Builds each available manifest, one result line per target on `out`;
/// the details of a failure (the log's last lines) go to stderr.
fn build(manifests: &[Manifest], cache: &BuildCache, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let width = manifests.iter().map(|m| m.name.len()).max().unwrap_or(0);
    let mut failed = Vec::new();
    for manifest in manifests {
        let name = &manifest.name;
        if let Availability::Unavailable { reason, hint } = manifest.availability() {
            let hint = hint.map(|h| format!(" (hint: {h})")).unwrap_or_default();
            writeln!(out, "skipped  {name:width$}  {reason}{hint}")?;
            continue;
        }
        let log = cache.log_path(name);
        if manifest.build.is_some() && !cache.is_built(manifest).unwrap_or(false) {
            eprintln!("building {name} (log: {})", log.display());
        }
        let started = Instant::now();
        match cache.build_with_outcome(manifest, &log) {
            Ok((built, BuildOutcome::Built)) => {
                let seconds = started.elapsed().as_secs_f64();
                writeln!(
                    out,
                    "built    {name:width$}  in {seconds:.1}s: {}",
                    built.out_dir.display()
                )?;
            }
            Ok((built, BuildOutcome::Cached)) => {
                writeln!(out, "cached   {name:width$}  {}", built.out_dir.display())?;
            }
            Ok((_, BuildOutcome::NothingToBuild)) => {
                writeln!(
                    out,
                    "cached   {name:width$}  nothing to build: runs from {}",
                    manifest.dir.display()
                )?;
            }
            Err(error) => {
                writeln!(out, "failed   {name:width$}  see {}", log.display())?;
                eprintln!("error: {error}");
                failed.push(name.clone());
            }
        }
    }
    out.flush()?;
    if failed.is_empty() {
        Ok(Exit::Success)
    } else {
        let message = format!(
            "{} of {} targets failed to build: {}",
            failed.len(),
            manifests.len(),
            failed.join(", ")
        );
        Err(exit::target_failed(message))
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corobench-target/tests/fixtures/targets")
    }

    fn select(dir: Option<&Path>, names: &[String]) -> anyhow::Result<Vec<Manifest>> {
        Ok(Targets::discover(dir)?.select(names)?)
    }

    #[test]
    fn json_lists_parameters_with_their_bounds() {
        let scratch = tempfile::tempdir().unwrap();
        let manifests = select(Some(&fixtures()), &["web".to_string()]).unwrap();
        let mut out = Vec::new();
        list(&manifests, &BuildCache::new(scratch.path()), true, &mut out).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let web = &value[0];
        assert_eq!(web["name"], "web");
        assert_eq!(web["available"], true);
        assert_eq!(web["built"], serde_json::Value::Null);
        assert_eq!(web["parameters"]["threads"]["kind"], "integer");
        assert_eq!(web["parameters"]["threads"]["max"], 64);
        assert_eq!(web["parameters"]["mode"]["choices"][1], "nonblocking");
    }

    #[test]
    fn build_reports_built_then_cached_and_skips_unavailable_targets() {
        let scratch = tempfile::tempdir().unwrap();
        let cache = BuildCache::new(scratch.path());
        let manifests =
            select(Some(&fixtures()), &["built".to_string(), "web".to_string()]).unwrap();
        let mut unavailable = manifests[1].clone();
        unavailable.requires.push("corobench-no-such-tool".into());
        let all = [manifests[0].clone(), manifests[1].clone(), unavailable];
        let mut out = Vec::new();
        assert_eq!(build(&all, &cache, &mut out).unwrap(), Exit::Success);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("built    built  in "), "{text}");
        assert!(
            lines[1].starts_with("cached   web    nothing to build: runs from "),
            "{text}"
        );
        assert_eq!(
            lines[2],
            "skipped  web    `corobench-no-such-tool` is not on PATH (hint: install Python 3)"
        );
        let mut again = Vec::new();
        build(&all[..1], &cache, &mut again).unwrap();
        assert!(
            String::from_utf8(again)
                .unwrap()
                .starts_with("cached   built  ")
        );
    }

    #[test]
    fn a_failed_build_exits_with_status_3() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().join("broken");
        std::fs::create_dir(&dir).unwrap();
        let text = "name = \"broken\"\nmodel = \"event-loop\"\nsummary = \"s\"\nlanguage = \"sh\"\n\
                    [build]\ncommand = [\"sh\", \"-c\", \"exit 1\"]\n[run]\ncommand = [\"true\"]\n";
        std::fs::write(dir.join("target.toml"), text).unwrap();
        let manifest = Manifest::load(&dir).unwrap();
        let cache = BuildCache::new(scratch.path().join("cache"));
        let mut out = Vec::new();
        let error = build(&[manifest], &cache, &mut out).unwrap_err();
        assert_eq!(
            error.downcast_ref::<exit::Failure>().unwrap().exit,
            Exit::TargetFailed
        );
        assert_eq!(error.to_string(), "1 of 1 targets failed to build: broken");
        let log = scratch.path().join("cache/logs/broken.build.log");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("failed   broken  see {}\n", log.display())
        );
    }
}
