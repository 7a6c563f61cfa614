//! `corobench verify [NAME…]`: builds, starts and checks targets against
//! docs/contract.md, one at a time, and prints each rule's verdict.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use corobench_target::{
    BuildCache, LaunchOptions, Manifest, Postgres, StopReport, TargetError, discover,
    ensure_payload, find_targets_dir,
};
use corobench_verify::{DatabaseProbe, Outcome, ProbeError, RuleResult, VerifyConfig, verify};
use serde_json::{Value, json};

use crate::exit::{self, Exit};

/// The contract's limit from SIGTERM to exit.
const SIGTERM_LIMIT: Duration = Duration::from_secs(5);
/// How long an ordinary response may take while verifying.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

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
    let dir =
        find_targets_dir(args.targets_dir.as_deref()).map_err(|e| exit::usage(e.to_string()))?;
    let manifests = select(&dir, &args.names)?;
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

/// The manifests to verify: `names` in the order given, or all of them.
fn select(dir: &Path, names: &[String]) -> anyhow::Result<Vec<Manifest>> {
    let all = discover(dir).map_err(|e| exit::usage(e.to_string()))?;
    if names.is_empty() {
        if all.is_empty() {
            return Err(exit::usage(format!(
                "no targets in {}: each target is a folder with a target.toml",
                dir.display()
            )));
        }
        return Ok(all);
    }
    let mut seen = BTreeSet::new();
    let mut chosen = Vec::new();
    for name in names {
        let Some(manifest) = all.iter().find(|m| &m.name == name) else {
            let known: Vec<&str> = all.iter().map(|m| m.name.as_str()).collect();
            return Err(exit::usage(format!(
                "no target named {name:?} in {}; targets there: {}",
                dir.display(),
                known.join(", ")
            )));
        };
        if seen.insert(name) {
            chosen.push(manifest.clone());
        }
    }
    Ok(chosen)
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

    /// Build, launch, health, rules, stop.
    fn check(&self, manifest: &Manifest) -> Result<Vec<RuleResult>, Box<TargetError>> {
        progress(&format!("building {}", manifest.name));
        let log = self.work_dir.join(format!("build-{}.log", manifest.name));
        let built = self.cache.build(manifest, &log)?;
        progress(&format!("starting {}", manifest.name));
        let options = LaunchOptions {
            data_dir: self.data_dir.clone(),
            upload_dir: self.work_dir.join("uploads").join(&manifest.name),
            database_url: self.database.as_ref().map(Postgres::url),
            work_dir: Some(self.work_dir.join("targets").join(&manifest.name)),
            ..LaunchOptions::default()
        };
        let mut running = built.launch(&options)?;
        running.wait_healthy(manifest.run.ready_timeout())?;
        progress(&format!(
            "verifying {} on {}",
            manifest.name,
            running.addr()
        ));
        let probe = self.database.as_ref().map(PsqlProbe);
        let mut config = VerifyConfig::new(running.addr(), &manifest.name, &manifest.model);
        config.database = probe.as_ref().map(|p| p as &dyn DatabaseProbe);
        config.timeout = RESPONSE_TIMEOUT;
        let mut results = verify(&config);
        if let Some(missing) = &self.database_missing {
            soften_db(&mut results, missing);
        }
        results.push(sigterm_rule(running.stop(), manifest.run.stop_timeout()));
        Ok(results)
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

/// A `db` that passed only because no database ran is a warning.
fn soften_db(results: &mut [RuleResult], missing: &str) {
    for result in results.iter_mut().filter(|r| r.rule == "db" && r.is_pass()) {
        result.outcome = Outcome::Warn(format!(
            "db: checked only that /db answers 503 without a database, because PostgreSQL did not start: {missing}"
        ));
    }
}

/// The sigterm rule, from how the stop went.
fn sigterm_rule(stop: Result<StopReport, TargetError>, stop_timeout: Duration) -> RuleResult {
    let outcome = match stop {
        Err(error) => Outcome::Fail(format!("sigterm: stopping the target failed: {error}")),
        Ok(report) if report.exited_before_stop => Outcome::Fail(format!(
            "sigterm: the target had already exited ({}) before SIGTERM was sent",
            report
                .status
                .map_or_else(|| "status unknown".to_owned(), |s| s.to_string())
        )),
        Ok(report) if report.needed_sigkill => Outcome::Fail(format!(
            "sigterm: the target was still running {stop_timeout:?} after SIGTERM and was killed with SIGKILL"
        )),
        Ok(report) if report.elapsed > SIGTERM_LIMIT => Outcome::Fail(format!(
            "sigterm: the target took {:.1?} to exit after SIGTERM, more than {SIGTERM_LIMIT:?}",
            report.elapsed
        )),
        Ok(_) => Outcome::Pass,
    };
    RuleResult {
        rule: "sigterm",
        outcome,
    }
}

/// Reads `world` and its statistics with `psql`. PostgreSQL 15 backends
/// flush table statistics when idle, at most once a second, so the counter
/// lags; the verifier polls it. Each `psql` is a new session, so no
/// statistics snapshot is cached between readings.
#[derive(Debug)]
struct PsqlProbe<'a>(&'a Postgres);

impl PsqlProbe<'_> {
    fn query(&self, sql: &str) -> Result<String, ProbeError> {
        self.0.psql(sql).map_err(|e| ProbeError(e.to_string()))
    }
}

impl DatabaseProbe for PsqlProbe<'_> {
    fn random_number(&self, id: i32) -> Result<Option<i32>, ProbeError> {
        let text = self.query(&format!("SELECT randomnumber FROM world WHERE id = {id}"))?;
        if text.trim().is_empty() {
            return Ok(None);
        }
        text.trim()
            .parse()
            .map(Some)
            .map_err(|_| ProbeError(format!("psql printed {text:?} for world row {id}")))
    }

    fn world_reads(&self) -> Result<u64, ProbeError> {
        let sql = "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) \
                   FROM pg_stat_user_tables WHERE relname = 'world'";
        let text = self.query(sql)?;
        text.trim()
            .parse()
            .map_err(|_| ProbeError(format!("psql printed {text:?} for the reads of world")))
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
