//! `corobench verify [NAME…]`: builds, starts and checks targets against
//! docs/contract.md, one at a time, and prints each rule's verdict.

use std::cell::Cell;
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use corobench_target::{BuildCache, Manifest, Postgres, TargetError, ensure_payload};
use corobench_verify::{Outcome, RuleResult};
use serde_json::{Value, json};

use crate::exit::Exit;
use crate::verification::{VerifyEnv, check_built};

/// Flags of `corobench verify`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 every rule passed (warnings allowed), 1 a rule failed, \
    3 a target failed to build or start.\n\nExamples:\n  \
    corobench verify\n  \
    corobench verify go-nethttp rust-axum --json"
)]
pub struct VerifyArgs {
    /// Targets to verify [default: every available target]
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,

    /// The folder holding one folder per target [default: ./targets or $COROBENCH_TARGETS]
    #[arg(long, value_name = "DIR")]
    pub targets_dir: Option<PathBuf>,

    /// Print the verdicts as JSON on stdout instead of a table
    #[arg(long)]
    pub json: bool,

    /// Do not start PostgreSQL: every /db must then answer 503
    #[arg(long)]
    pub no_db: bool,
}

/// What became of one target.
#[derive(Debug)]
enum Verdict {
    Verified(Vec<RuleResult>),
    /// Unavailable here; the reason says what is missing.
    Skipped(String),
    /// It did not build, start or become healthy.
    Failed(String),
}

/// Runs `corobench verify`.
///
/// # Errors
/// A bad targets folder or target name (exit 2), an unusable cache or work
/// folder.
pub fn run(args: &VerifyArgs) -> anyhow::Result<Exit> {
    let manifests = super::targets::select(args.targets_dir.as_deref(), &args.names)?;
    let session = Session::open(&manifests, args.no_db)?;
    let verdicts: Vec<(Manifest, Verdict)> = manifests
        .into_iter()
        .map(|manifest| {
            let verdict = session.verify_target(&manifest);
            (manifest, verdict)
        })
        .collect();
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let document = json_document(&verdicts, session.database.is_some());
        writeln!(stdout, "{}", serde_json::to_string_pretty(&document)?)?;
    } else {
        write!(stdout, "{}", table(&verdicts))?;
    }
    stdout.flush()?;
    Ok(exit_status(&verdicts))
}

fn exit_status(verdicts: &[(Manifest, Verdict)]) -> Exit {
    let failed_target = verdicts
        .iter()
        .any(|(_, v)| matches!(v, Verdict::Failed(_)));
    let failed_rule = verdicts.iter().any(
        |(_, v)| matches!(v, Verdict::Verified(results) if results.iter().any(RuleResult::is_fail)),
    );
    if failed_target {
        Exit::TargetFailed
    } else if failed_rule {
        Exit::CheckFailed
    } else {
        Exit::Success
    }
}

/// What every target of one invocation shares: the build cache, a scratch
/// folder, the payload and (once) PostgreSQL.
struct Session {
    cache: BuildCache,
    work_dir: PathBuf,
    data_dir: PathBuf,
    database: Option<Postgres>,
    /// Why no database runs although one was wanted.
    database_missing: Option<String>,
    /// A target failed: its logs in `work_dir` are kept for reading.
    keep_work_dir: Cell<bool>,
}

impl Session {
    fn open(manifests: &[Manifest], no_db: bool) -> anyhow::Result<Self> {
        let cache = BuildCache::from_env().context("choosing the build cache")?;
        let work_dir =
            std::env::temp_dir().join(format!("corobench-verify-{}", std::process::id()));
        std::fs::create_dir_all(&work_dir)
            .with_context(|| format!("creating {}", work_dir.display()))?;
        let data_dir = cache.root().join("data");
        ensure_payload(&data_dir).context("writing the payload /file serves")?;
        let mut session = Self {
            cache,
            work_dir,
            data_dir,
            database: None,
            database_missing: None,
            keep_work_dir: Cell::new(false),
        };
        if !no_db && manifests.iter().any(|m| m.availability().is_available()) {
            progress("starting PostgreSQL");
            match Postgres::start(&session.work_dir) {
                Ok(database) => session.database = Some(database),
                Err(error) => {
                    progress(&format!(
                        "warning: PostgreSQL did not start, /db is checked without it: {error}"
                    ));
                    session.database_missing = Some(error.to_string());
                }
            }
        }
        Ok(session)
    }

    fn verify_target(&self, manifest: &Manifest) -> Verdict {
        if let corobench_target::Availability::Unavailable { reason, hint } =
            manifest.availability()
        {
            return Verdict::Skipped(
                hint.map_or_else(|| reason.clone(), |hint| format!("{reason} ({hint})")),
            );
        }
        match self.check(manifest) {
            Ok(results) => Verdict::Verified(results),
            Err(error) => {
                self.keep_work_dir.set(true);
                Verdict::Failed(error.to_string())
            }
        }
    }

    /// Build, then launch, health, rules and stop (shared with `corobench run`).
    fn check(&self, manifest: &Manifest) -> Result<Vec<RuleResult>, Box<TargetError>> {
        progress(&format!("building {}", manifest.name));
        let log = self.work_dir.join(format!("build-{}.log", manifest.name));
        let built = self.cache.build(manifest, &log)?;
        progress(&format!("verifying {}", manifest.name));
        let env = VerifyEnv {
            data_dir: self.data_dir.clone(),
            work_dir: self.work_dir.clone(),
            database: self.database.as_ref(),
            database_missing: self.database_missing.as_deref(),
            cpus: None,
        };
        check_built(&built, &env)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(database) = self.database.take()
            && let Err(error) = database.stop()
        {
            progress(&format!("warning: stopping PostgreSQL: {error}"));
        }
        if self.keep_work_dir.get() {
            progress(&format!(
                "build and target logs kept in {}",
                self.work_dir.display()
            ));
        } else {
            let _ = std::fs::remove_dir_all(&self.work_dir);
        }
    }
}

fn progress(message: &str) {
    eprintln!("verify: {message}");
}

/// Rules down, verified targets across; then every warning and failure in
/// full, then the targets skipped or failed.
fn table(verdicts: &[(Manifest, Verdict)]) -> String {
    let verified: Vec<(&str, &[RuleResult])> = verdicts
        .iter()
        .filter_map(|(m, v)| match v {
            Verdict::Verified(results) => Some((m.name.as_str(), results.as_slice())),
            _ => None,
        })
        .collect();
    let mut out = String::new();
    if let Some((_, first)) = verified.first() {
        let rule_width = first.iter().map(|r| r.rule.len()).max().unwrap_or(4).max(4);
        out.push_str(&format!("{:rule_width$}", "rule"));
        for (name, _) in &verified {
            out.push_str(&format!("  {name:<width$}", width = name.len().max(4)));
        }
        out.push('\n');
        for (index, result) in first.iter().enumerate() {
            out.push_str(&format!("{:rule_width$}", result.rule));
            for (name, results) in &verified {
                let cell = results.get(index).map_or("?", |r| outcome_word(&r.outcome));
                out.push_str(&format!("  {cell:<width$}", width = name.len().max(4)));
            }
            out.push('\n');
        }
    }
    let mut out: String = out
        .lines()
        .map(|line| format!("{}\n", line.trim_end()))
        .collect();
    let details = details(verdicts);
    out.push_str(if out.is_empty() {
        details.trim_start()
    } else {
        &details
    });
    out
}

fn outcome_word(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "pass",
        Outcome::Warn(_) => "warn",
        Outcome::Fail(_) => "FAIL",
    }
}

fn details(verdicts: &[(Manifest, Verdict)]) -> String {
    let mut out = String::new();
    for (manifest, verdict) in verdicts {
        match verdict {
            Verdict::Verified(results) => {
                let noted: Vec<&RuleResult> = results.iter().filter(|r| !r.is_pass()).collect();
                if !noted.is_empty() {
                    out.push_str(&format!("\n{}:\n", manifest.name));
                }
                for result in noted {
                    let word = outcome_word(&result.outcome);
                    out.push_str(&format!(
                        "  {word} {}\n",
                        result.message().unwrap_or_default()
                    ));
                }
            }
            Verdict::Skipped(reason) => {
                out.push_str(&format!("\n{}: skipped: {reason}\n", manifest.name))
            }
            Verdict::Failed(error) => out.push_str(&format!(
                "\n{}: FAILED to build or start: {error}\n",
                manifest.name
            )),
        }
    }
    out
}

fn json_document(verdicts: &[(Manifest, Verdict)], database: bool) -> Value {
    let targets: Vec<Value> = verdicts
        .iter()
        .map(|(manifest, verdict)| {
            let mut entry = json!({ "name": manifest.name, "model": manifest.model });
            let fields = match verdict {
                Verdict::Verified(results) => json!({ "status": "verified", "rules": results }),
                Verdict::Skipped(reason) => json!({ "status": "skipped", "reason": reason }),
                Verdict::Failed(error) => json!({ "status": "failed", "error": error }),
            };
            if let (Some(entry), Value::Object(fields)) = (entry.as_object_mut(), fields) {
                entry.extend(fields);
            }
            entry
        })
        .collect();
    json!({ "database": database, "targets": targets })
}
