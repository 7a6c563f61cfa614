//! A throwaway PostgreSQL cluster for `/db`: initdb into a private
//! directory, a postmaster on a free loopback port in its own guarded process
//! group (so it never outlives corobench), and the `world` table of
//! docs/contract.md. No mock: the real server.

mod install;

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub use install::ServerUser;

use crate::command::{Captured, run_captured};
use crate::error::TargetError;
use crate::group::ProcessGroup;
use crate::launch::free_port;
use crate::{procfs, tail};

/// The superuser `initdb` creates and the database the targets use.
pub const DATABASE: &str = "corobench";
/// Rows of `world`.
pub const WORLD_ROWS: u32 = 10_000;
/// Enough connections for a pool-size sweep plus the verifier.
const MAX_CONNECTIONS: u32 = 300;
const INITDB_TIMEOUT: Duration = Duration::from_secs(300);
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const PSQL_TIMEOUT: Duration = Duration::from_secs(120);
/// Fast shutdown (SIGINT) to SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_PORT_RETRIES: u32 = 3;

/// The schema and data of docs/contract.md's `/db`: ids 1..=10000, random
/// numbers in 1..=10000.
fn world_sql() -> String {
    format!(
        "CREATE TABLE world (id integer PRIMARY KEY, randomnumber integer NOT NULL);
INSERT INTO world (id, randomnumber)
  SELECT i, 1 + floor(random() * {WORLD_ROWS})::integer FROM generate_series(1, {WORLD_ROWS}) AS i;
ANALYZE world;"
    )
}

/// A running throwaway cluster; dropping it stops the server and deletes it.
#[derive(Debug)]
pub struct Postgres {
    group: Option<ProcessGroup>,
    dir: PathBuf,
    bindir: PathBuf,
    port: u16,
}

fn postgres_error(message: impl Into<String>) -> TargetError {
    TargetError::Postgres {
        message: message.into(),
    }
}

impl Postgres {
    /// Creates a cluster under `work_root` (or the temporary directory when
    /// the server's user cannot reach it), starts it, and creates database
    /// `corobench` with `world` filled with 10,000 rows.
    ///
    /// # Errors
    /// PostgreSQL missing (with how to install it), initdb failing (with its
    /// output), the server not starting (with its log's last lines).
    pub fn start(work_root: &Path) -> Result<Self, TargetError> {
        let bindir = install::find_bindir()?;
        let user = install::server_user()?;
        let dir = install::cluster_dir(work_root, user)?;
        let mut cluster = Self {
            group: None,
            dir,
            bindir,
            port: 0,
        };
        cluster.initdb(user)?;
        cluster.start_server(user)?;
        cluster.psql_in("postgres", &format!("CREATE DATABASE {DATABASE}"))?;
        cluster.psql(&world_sql())?;
        Ok(cluster)
    }

    /// `postgres://corobench@127.0.0.1:PORT/corobench`
    #[must_use]
    pub fn url(&self) -> String {
        format!("postgres://{DATABASE}@127.0.0.1:{}/{DATABASE}", self.port)
    }

    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cluster's directory (data, socket and log).
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The server's log.
    #[must_use]
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("postgres.log")
    }

    /// The postmaster's pid (also its process group).
    #[must_use]
    pub fn pid(&self) -> Option<i32> {
        self.group.as_ref().map(ProcessGroup::pid)
    }

    /// Runs `sql` in database `corobench` and returns what psql printed:
    /// unaligned, tuples only (`1|4242` per row), without the final newline.
    ///
    /// # Errors
    /// psql failed or the SQL raised an error (its message is in the error).
    pub fn psql(&self, sql: &str) -> Result<String, TargetError> {
        self.psql_in(DATABASE, sql)
    }

    fn psql_in(&self, database: &str, sql: &str) -> Result<String, TargetError> {
        let mut command = Command::new(self.bindir.join("psql"));
        command.args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            "127.0.0.1",
            "-U",
            DATABASE,
        ]);
        command.args(["-p", &self.port.to_string(), "-d", database, "-c", sql]);
        let out = run_captured(&mut command, "querying PostgreSQL", PSQL_TIMEOUT)?;
        if !out.status.success() {
            return Err(postgres_error(format!(
                "psql {} running {sql:?}: {}",
                out.status,
                out.output()
            )));
        }
        Ok(out.stdout.trim_end_matches('\n').to_string())
    }

    fn initdb(&self, user: Option<ServerUser>) -> Result<(), TargetError> {
        let mut command = self.server_command("initdb", user);
        command.arg("-D").arg(self.dir.join("data"));
        command.args([
            "--auth=trust",
            "-U",
            DATABASE,
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ]);
        let out: Captured = run_captured(
            &mut command,
            "creating a PostgreSQL cluster",
            INITDB_TIMEOUT,
        )?;
        if !out.status.success() {
            return Err(postgres_error(format!(
                "initdb {}:\n{}",
                out.status,
                out.output()
            )));
        }
        Ok(())
    }

    /// Starts the postmaster on a free port, retrying a clash on another one.
    fn start_server(&mut self, user: Option<ServerUser>) -> Result<(), TargetError> {
        for retry in 0..=MAX_PORT_RETRIES {
            self.port = free_port()?;
            let mut command = self.server_command("postgres", user);
            command
                .arg("-D")
                .arg(self.dir.join("data"))
                .arg("-p")
                .arg(self.port.to_string());
            command.arg("-k").arg(&self.dir);
            for setting in [
                "listen_addresses=127.0.0.1",
                "fsync=off",
                &format!("max_connections={MAX_CONNECTIONS}"),
            ] {
                command.args(["-c", setting]);
            }
            let log = std::fs::File::create(self.log_path())
                .map_err(|e| TargetError::io("create", self.log_path(), e))?;
            let log_err = log
                .try_clone()
                .map_err(|e| TargetError::io("open", self.log_path(), e))?;
            command.stdin(Stdio::null()).stdout(log).stderr(log_err);
            self.group = Some(ProcessGroup::spawn(&mut command, None, "PostgreSQL")?);
            match self.wait_ready() {
                Ok(()) => return Ok(()),
                Err(_) if retry < MAX_PORT_RETRIES && self.log_reports_port_clash() => {
                    self.stop_server();
                }
                Err(error) => return Err(error),
            }
        }
        unreachable!("the last retry returns")
    }

    fn wait_ready(&self) -> Result<(), TargetError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let group = self.group.as_ref().expect("a server was just started");
        loop {
            if let Some(status) = group.exit_status() {
                return Err(self.start_error(&format!("the server exited ({status})")));
            }
            let mut command = Command::new(self.bindir.join("pg_isready"));
            command.args([
                "-q",
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                DATABASE,
                "-t",
                "2",
            ]);
            if run_captured(&mut command, "checking PostgreSQL", Duration::from_secs(10))?
                .status
                .success()
            {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(
                    self.start_error(&format!("no connections accepted within {READY_TIMEOUT:?}"))
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn start_error(&self, what: &str) -> TargetError {
        postgres_error(format!(
            "cannot start the server on port {}: {what}; last lines of {}:\n{}",
            self.port,
            self.log_path().display(),
            tail::last_lines(&self.log_path(), 20)
        ))
    }

    fn log_reports_port_clash(&self) -> bool {
        tail::last_lines(&self.log_path(), 50).contains("Address already in use")
    }

    /// A command for one of the server programs, run as `user` (when root).
    fn server_command(&self, program: &str, user: Option<ServerUser>) -> Command {
        let mut command = Command::new(self.bindir.join(program));
        command
            .current_dir(&self.dir)
            .env("LC_ALL", "C")
            .env_remove("PGDATA");
        if let Some(user) = user {
            command.uid(user.uid).gid(user.gid);
        }
        command
    }

    /// Fast shutdown (SIGINT to the postmaster), SIGKILL to the group after
    /// a timeout; everything reaped. The postmaster's children leave its
    /// process group (each calls `setsid`) and end by themselves once it is
    /// gone, so they are awaited by pid.
    fn stop_server(&mut self) -> Vec<i32> {
        let Some(mut group) = self.group.take() else {
            return Vec::new();
        };
        let children: Vec<i32> = procfs::children_of(group.pid())
            .iter()
            .map(|c| c.pid)
            .collect();
        let mut survivors = group.stop(libc::SIGINT, false, STOP_TIMEOUT).survivors;
        let remaining = procfs::await_gone(children, STOP_TIMEOUT);
        survivors.extend(remaining);
        survivors
    }

    /// Stops the server and deletes the cluster.
    ///
    /// # Errors
    /// Server processes that survived SIGKILL, or a directory that cannot be removed.
    pub fn stop(mut self) -> Result<(), TargetError> {
        let survivors = self.stop_server();
        if !survivors.is_empty() {
            return Err(postgres_error(format!(
                "processes {survivors:?} survived SIGKILL"
            )));
        }
        std::fs::remove_dir_all(&self.dir).map_err(|e| TargetError::io("remove", &self.dir, e))
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop_server();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
