//! `corobench verify`'s session: what every target of one invocation
//! shares (the build cache, a scratch folder, the payload and, once,
//! PostgreSQL), and one verdict per target.

use std::cell::Cell;
use std::path::PathBuf;

use anyhow::Context as _;
use corobench_target::{BuildCache, Manifest, Postgres, TargetError, ensure_payload};
use corobench_verify::RuleResult;

use super::program::{PREFERRED_SERVER, check_program};
use super::{VerifyEnv, check_built};
use crate::targets::Targets;

/// What became of one target.
#[derive(Debug)]
pub enum Verdict {
    Verified(Vec<RuleResult>),
    /// Unavailable here; the reason says what is missing.
    Skipped(String),
    /// It did not build, start or become healthy.
    Failed(String),
}

/// What every target of one invocation shares: the build cache, a scratch
/// folder, the payload and (once) PostgreSQL.
#[derive(Debug)]
pub struct Session {
    cache: BuildCache,
    work_dir: PathBuf,
    data_dir: PathBuf,
    pub database: Option<Postgres>,
    /// Why no database runs although one was wanted.
    database_missing: Option<String>,
    /// A target failed: its logs in `work_dir` are kept for reading.
    keep_work_dir: Cell<bool>,
    /// The server program targets that need one are checked against.
    program_server: Option<Manifest>,
}

impl Session {
    /// Opens a session for `manifests`; `no_db` leaves PostgreSQL off.
    ///
    /// # Errors
    /// An unusable cache or scratch folder.
    pub fn open(manifests: &[Manifest], targets: &Targets, no_db: bool) -> anyhow::Result<Self> {
        let cache = BuildCache::from_env().context("choosing the build cache")?;
        crate::scratch::check_temp_dir()?;
        crate::scratch::remove_stale();
        let work_dir = crate::scratch::folder("verify");
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
            program_server: program_server(targets),
        };
        let serves_db = |m: &&Manifest| m.program().is_none() && m.availability().is_available();
        if !no_db && manifests.iter().any(|m| serves_db(&m)) {
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

    /// Builds and verifies one target, or says why it was not.
    #[must_use]
    pub fn verify_target(&self, manifest: &Manifest) -> Verdict {
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
        if let Some(program) = manifest.program() {
            let server = match (program.needs_server(), &self.program_server) {
                (false, _) => None,
                (true, Some(server)) => Some(self.cache.build(server, &log)?),
                (true, None) => {
                    return Err(Box::new(TargetError::Config {
                        message: format!(
                            "{} needs a server target and none can run here",
                            manifest.name
                        ),
                    }));
                }
            };
            return check_program(&built, server.as_ref(), &self.env());
        }
        check_built(&built, &self.env())
    }

    fn env(&self) -> VerifyEnv<'_> {
        VerifyEnv {
            data_dir: self.data_dir.clone(),
            work_dir: self.work_dir.clone(),
            database: self.database.as_ref(),
            database_missing: self.database_missing.as_deref(),
            cpus: None,
            cancel: None,
        }
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

/// The preferred server if it can run here, else the first server that can.
fn program_server(targets: &Targets) -> Option<Manifest> {
    let servers: Vec<Manifest> = targets
        .select(&[])
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.program().is_none() && m.availability().is_available())
        .collect();
    servers
        .iter()
        .find(|m| m.name == PREFERRED_SERVER)
        .or_else(|| servers.first())
        .cloned()
}

fn progress(message: &str) {
    eprintln!("verify: {message}");
}
