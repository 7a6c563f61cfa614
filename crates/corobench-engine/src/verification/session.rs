//! `corobench verify`'s session: what every target of one invocation
//! shares (the build cache, a scratch folder, the payload and, once,
//! PostgreSQL), and one verdict per target. Its steps are told to an
//! observer, as a run's are.

use corobench_target::{BuiltTarget, Manifest, Postgres, Protocol, RunCertificates, TargetError};
use corobench_verify::RuleResult;

use super::program::{PREFERRED_SERVER, check_program};
use super::{VerifyEnv, check_built};
use crate::error::EngineError;
use crate::events::RunObserver;
use crate::targets::Targets;
use crate::workspace::Workspace;

/// What became of one target.
#[derive(Debug)]
pub enum Verdict {
    Verified(Vec<RuleResult>),
    /// Unavailable here; the reason says what is missing.
    Skipped(String),
    /// It did not build, start or become healthy.
    Failed(String),
    /// Not checked in this protocol: the manifest says it is not served, and why.
    NotServed(String),
}

/// What every target of one invocation shares: the build cache, a scratch
/// folder, the payload and (once) PostgreSQL.
pub struct Session<'a> {
    observer: &'a (dyn RunObserver + Sync),
    workspace: Workspace,
    pub database: Option<Postgres>,
    /// Why no database runs although one was wanted.
    database_missing: Option<String>,
    /// The server program targets that need one are checked against.
    program_server: Option<Manifest>,
    /// The session's certificates, made once when a target serves TLS (or
    /// why they could not be).
    certificates: Option<Result<RunCertificates, TargetError>>,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("workspace", &self.workspace)
            .field("database", &self.database)
            .finish_non_exhaustive()
    }
}

impl<'a> Session<'a> {
    /// Opens a session for `manifests`; `no_db` leaves PostgreSQL off.
    /// Its steps and warnings go to `observer`.
    ///
    /// # Errors
    /// An unusable cache or scratch folder.
    pub fn open(
        manifests: &[Manifest],
        targets: &Targets,
        no_db: bool,
        observer: &'a (dyn RunObserver + Sync),
    ) -> Result<Self, EngineError> {
        let mut session = Self {
            observer,
            workspace: Workspace::open("verify")?,
            database: None,
            database_missing: None,
            program_server: program_server(targets),
            certificates: None,
        };
        if manifests
            .iter()
            .any(|m| m.protocols.served().iter().any(|p| p.tls))
        {
            let dir = session.workspace.work_dir.join("tls");
            session.certificates = Some(RunCertificates::create(&dir, &[]));
        }
        let serves_db = |m: &&Manifest| m.program().is_none() && m.availability().is_available();
        if !no_db && manifests.iter().any(|m| serves_db(&m)) {
            observer.preparing("starting PostgreSQL");
            match Postgres::start(&session.workspace.work_dir) {
                Ok(database) => session.database = Some(database),
                Err(error) => {
                    observer.notice(&format!(
                        "warning: PostgreSQL did not start, /db is checked without it: {error}"
                    ));
                    session.database_missing = Some(error.to_string());
                }
            }
        }
        Ok(session)
    }

    /// Builds and verifies one target in every protocol, or says why it
    /// was not: one verdict per protocol, cleartext HTTP/1.1 first (a
    /// program, or a target that cannot run, has that one only).
    #[must_use]
    pub fn verify_target(&self, manifest: &Manifest) -> Vec<(Protocol, Verdict)> {
        let only = |verdict| vec![(Protocol::HTTP1, verdict)];
        if let corobench_target::Availability::Unavailable { reason, hint } =
            manifest.availability()
        {
            return only(Verdict::Skipped(hint.map_or_else(
                || reason.clone(),
                |hint| format!("{reason} ({hint})"),
            )));
        }
        if !manifest.contract {
            return only(Verdict::Skipped(
                "a user's server (contract = false): it serves its own endpoints, which a run \
                 checks against each workload's expectations"
                    .to_owned(),
            ));
        }
        let built = match self.build(manifest) {
            Ok(built) => built,
            Err(error) => return only(self.failed(&error)),
        };
        if manifest.program().is_some() {
            return only(self.verdict(self.check_program(&built)));
        }
        Protocol::ALL
            .into_iter()
            .map(|protocol| {
                let verdict = match manifest.protocols.supports(protocol) {
                    Ok(()) => self.verdict(self.check_in(&built, protocol)),
                    Err(reason) => Verdict::NotServed(reason.to_owned()),
                };
                (protocol, verdict)
            })
            .collect()
    }

    fn verdict(&self, checked: Result<Vec<RuleResult>, Box<TargetError>>) -> Verdict {
        match checked {
            Ok(results) => Verdict::Verified(results),
            Err(error) => self.failed(&error),
        }
    }

    fn failed(&self, error: &TargetError) -> Verdict {
        self.workspace.keep_logs();
        Verdict::Failed(error.to_string())
    }

    fn build(&self, manifest: &Manifest) -> Result<BuiltTarget, Box<TargetError>> {
        self.observer
            .preparing(&format!("building {}", manifest.name));
        let log = self.workspace.cache.log_path(&manifest.name);
        Ok(self.workspace.cache.build(manifest, &log)?)
    }

    /// Launch in `protocol`, health, rules and stop (shared with `corobench run`).
    fn check_in(
        &self,
        built: &BuiltTarget,
        protocol: Protocol,
    ) -> Result<Vec<RuleResult>, Box<TargetError>> {
        let name = &built.manifest.name;
        self.observer
            .preparing(&format!("verifying {name} over {protocol}"));
        let tls = match (&self.certificates, protocol.tls) {
            (_, false) => None,
            (Some(Ok(certificates)), true) => Some(certificates.files()),
            (Some(Err(why)), true) => {
                let message = format!("cannot make the certificates for {name}: {why}");
                return Err(Box::new(TargetError::Config { message }));
            }
            (None, true) => unreachable!("certificates are made when a target serves TLS"),
        };
        let env = VerifyEnv {
            protocol,
            tls,
            ..self.env()
        };
        check_built(built, &env)
    }

    fn check_program(&self, built: &BuiltTarget) -> Result<Vec<RuleResult>, Box<TargetError>> {
        let manifest = &built.manifest;
        self.observer
            .preparing(&format!("verifying {}", manifest.name));
        let log = self.workspace.cache.log_path(&manifest.name);
        if let Some(program) = manifest.program() {
            let server = match (program.needs_server(), &self.program_server) {
                (false, _) => None,
                (true, Some(server)) => Some(self.workspace.cache.build(server, &log)?),
                (true, None) => {
                    return Err(Box::new(TargetError::Config {
                        message: format!(
                            "{} needs a server target and none can run here",
                            manifest.name
                        ),
                    }));
                }
            };
            return check_program(built, server.as_ref(), &self.env());
        }
        check_built(built, &self.env())
    }

    fn env(&self) -> VerifyEnv<'_> {
        VerifyEnv {
            data_dir: self.workspace.data_dir.clone(),
            work_dir: self.workspace.work_dir.clone(),
            database: self.database.as_ref(),
            database_missing: self.database_missing.as_deref(),
            cpus: None,
            cancel: None,
            check_listen: true,
            protocol: Protocol::HTTP1,
            tls: None,
        }
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if let Some(database) = self.database.take()
            && let Err(error) = database.stop()
        {
            self.observer
                .notice(&format!("warning: stopping PostgreSQL: {error}"));
        }
        if self.workspace.keeps_logs() {
            self.observer.notice(&format!(
                "build and target logs kept in {}",
                self.workspace.work_dir.display()
            ));
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
