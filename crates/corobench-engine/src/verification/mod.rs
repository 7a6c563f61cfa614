//! Verifying targets against the contract (the rules themselves live in
//! `corobench-verify`). Here: checking one built target (launch it, check
//! every rule, stop it: the `sigterm` rule), the [`session`] of
//! `corobench verify` (builds, PostgreSQL, one verdict per target), and the
//! [`gate`] of `corobench run`, which verifies each target once before
//! measuring it and excludes one that breaks a rule the run depends on.

pub mod expectations;
pub mod gate;
mod listen;
pub mod program;
pub mod session;

use std::path::PathBuf;
use std::time::Duration;

use corobench_target::{
    BuiltTarget, CpuSet, LaunchOptions, Manifest, Postgres, Protocol, RunningTarget, StopReport,
    TargetError, TlsFiles,
};
use corobench_verify::{DatabaseProbe, Outcome, ProbeError, RuleResult, VerifyConfig, verify};

/// The contract's limit from SIGTERM to exit.
pub const SIGTERM_LIMIT: Duration = Duration::from_secs(5);
/// How long an ordinary response may take while verifying.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a target under verification runs and what it may use.
#[derive(Debug)]
pub struct VerifyEnv<'a> {
    pub data_dir: PathBuf,
    /// The target's uploads and logs go below this folder.
    pub work_dir: PathBuf,
    pub database: Option<&'a Postgres>,
    /// Why no database runs although one was wanted.
    pub database_missing: Option<&'a str>,
    pub cpus: Option<CpuSet>,
    /// Set by Ctrl-C: the rules not yet checked are skipped.
    pub cancel: Option<&'a std::sync::atomic::AtomicBool>,
    /// Whether to start the target a second time for `listen-addr`, which
    /// only a run across hosts depends on (checked in cleartext only).
    pub check_listen: bool,
    /// The protocol the target is started in and checked over.
    pub protocol: Protocol,
    /// The run's certificates, for a protocol over TLS.
    pub tls: Option<&'a TlsFiles>,
}

/// Launches `built` with its default parameters, checks every rule, stops it.
///
/// # Errors
/// The target did not start or become healthy.
pub fn check_built(
    built: &BuiltTarget,
    env: &VerifyEnv<'_>,
) -> Result<Vec<RuleResult>, Box<TargetError>> {
    let manifest = &built.manifest;
    // Each protocol's start keeps its own logs.
    let folder = match env.protocol {
        Protocol::HTTP1 => manifest.name.clone(),
        other => format!("{}-{other}", manifest.name),
    };
    let options = LaunchOptions {
        data_dir: env.data_dir.clone(),
        upload_dir: env.work_dir.join("uploads").join(&folder),
        database_url: env.database.map(Postgres::url),
        work_dir: Some(env.work_dir.join("targets").join(&folder)),
        cpus: env.cpus.clone(),
        protocol: env.protocol,
        tls: env.tls.cloned(),
        ..LaunchOptions::default()
    };
    let mut running = built.launch(&options)?;
    running.wait_healthy(manifest.run.ready_timeout())?;
    let mut results = check_running(&running, manifest, env.database, env.cancel);
    if env
        .cancel
        .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    {
        // Dropped, the target is killed at once: a stop that waits for
        // SIGTERM would only delay the interruption.
        return Ok(results);
    }
    if let Some(missing) = env.database_missing {
        soften_db(&mut results, missing);
    }
    results.push(sigterm_rule(running.stop(), manifest.run.stop_timeout()));
    if env.check_listen && env.protocol == Protocol::HTTP1 {
        results.push(listen::listen_rule(built, &options));
    }
    Ok(results)
}

/// Every rule but `sigterm` against a target that is running: `verify`,
/// the gate of `run` and `serve` alike. Without `database`, `/db` must
/// answer 503.
#[must_use]
pub fn check_running(
    running: &RunningTarget,
    manifest: &Manifest,
    database: Option<&Postgres>,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Vec<RuleResult> {
    let probe = database.map(PsqlProbe);
    let mut config = VerifyConfig::new(running.addr(), &manifest.name, &manifest.model);
    config.database = probe.as_ref().map(|p| p as &dyn DatabaseProbe);
    config.timeout = RESPONSE_TIMEOUT;
    config.cancel = cancel;
    config.protocol = running.protocol();
    config.tls = running.tls();
    verify(&config)
}

/// A `db` or `select1` that passed only because no database ran is a warning.
fn soften_db(results: &mut [RuleResult], missing: &str) {
    let database_rules = ["db", "select1"];
    for result in results
        .iter_mut()
        .filter(|r| database_rules.contains(&r.rule) && r.is_pass())
    {
        let rule = result.rule;
        result.outcome = Outcome::Warn(format!(
            "{rule}: checked only that /{rule} answers 503 without a database, because PostgreSQL did not start: {missing}"
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
