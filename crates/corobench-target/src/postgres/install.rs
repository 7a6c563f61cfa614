//! Finding PostgreSQL's programs, the user they run as, and a cluster
//! directory that user owns.

use std::ffi::CString;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::availability::find_on_path;
use crate::command::run_captured;
use crate::error::TargetError;

/// The programs a throwaway cluster needs.
const PROGRAMS: &[&str] = &["initdb", "postgres", "psql", "pg_isready"];
/// The system user PostgreSQL runs as when corobench runs as root.
const SERVER_USER: &str = "postgres";
/// Unix socket paths are limited to 107 bytes; leave room for `/.s.PGSQL.NNNNN`.
const MAX_SOCKET_DIR_BYTES: usize = 80;

/// A user other than ours that the server must run as (`initdb` and
/// `postgres` refuse to run as root).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerUser {
    pub uid: u32,
    pub gid: u32,
}

fn postgres_error(message: impl Into<String>) -> TargetError {
    TargetError::Postgres {
        message: message.into(),
    }
}

/// The directory holding `initdb`, `postgres`, `psql` and `pg_isready`:
/// `$COROBENCH_PG_BINDIR`, else `pg_config --bindir`, else the newest
/// `/usr/lib/postgresql/*/bin`, else PATH.
///
/// # Errors
/// PostgreSQL is not installed, with the command that installs it.
pub fn find_bindir() -> Result<PathBuf, TargetError> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("COROBENCH_PG_BINDIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    if find_on_path("pg_config").is_some() {
        let mut command = Command::new("pg_config");
        command.arg("--bindir");
        if let Ok(out) = run_captured(&mut command, "finding PostgreSQL", Duration::from_secs(10)) {
            candidates.push(PathBuf::from(out.stdout.trim()));
        }
    }
    candidates.extend(versioned_bindirs(Path::new("/usr/lib/postgresql")));
    candidates.extend(find_on_path("initdb").and_then(|p| p.parent().map(Path::to_path_buf)));
    candidates
        .into_iter()
        .find(|dir| PROGRAMS.iter().all(|program| find_on_path(&dir.join(program).to_string_lossy()).is_some()))
        .ok_or_else(|| {
            postgres_error(format!(
                "not installed: no directory holds {} (looked at $COROBENCH_PG_BINDIR, pg_config --bindir, \
                 /usr/lib/postgresql/*/bin and PATH); install it with `apt-get install postgresql`",
                PROGRAMS.join(", ")
            ))
        })
}

/// `<root>/<version>/bin`, newest version first.
fn versioned_bindirs(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut versions: Vec<(u32, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_str()?.split('.').next()?.parse().ok()?;
            Some((version, e.path().join("bin")))
        })
        .collect();
    versions.sort_by_key(|(version, _)| std::cmp::Reverse(*version));
    versions.into_iter().map(|(_, dir)| dir).collect()
}

/// `Some(postgres user)` when running as root, `None` (run as ourselves) otherwise.
///
/// # Errors
/// Running as root on a machine without a `postgres` user.
pub fn server_user() -> Result<Option<ServerUser>, TargetError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    lookup_user(SERVER_USER).map(Some).ok_or_else(|| {
        postgres_error(format!(
            "corobench runs as root, which initdb and postgres refuse, and there is no `{SERVER_USER}` user to \
             run them as: install PostgreSQL's package (it creates one), `useradd --system {SERVER_USER}`, \
             or run corobench as another user"
        ))
    })
}

fn lookup_user(name: &str) -> Option<ServerUser> {
    let name = CString::new(name).ok()?;
    // SAFETY: a zeroed passwd is a valid out parameter.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buffer = vec![0 as libc::c_char; 16 * 1024];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the sizes passed; getpwnam_r fills `entry` using `buffer`.
    let rc = unsafe {
        libc::getpwnam_r(
            name.as_ptr(),
            &raw mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &raw mut found,
        )
    };
    if rc != 0 || found.is_null() {
        return None;
    }
    Some(ServerUser {
        uid: entry.pw_uid,
        gid: entry.pw_gid,
    })
}

/// A fresh, private cluster directory owned by `user`: under `work_root`
/// when that user can reach it and the socket path stays short enough,
/// else under the system's temporary directory (a root-only home such as
/// `/root/.cache` is out of the `postgres` user's reach).
///
/// # Errors
/// The directory cannot be created or handed to `user`.
pub fn cluster_dir(work_root: &Path, user: Option<ServerUser>) -> Result<PathBuf, TargetError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "postgres-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let work_root =
        std::path::absolute(work_root).map_err(|e| TargetError::io("resolve", work_root, e))?;
    std::fs::create_dir_all(&work_root).map_err(|e| TargetError::io("create", &work_root, e))?;
    let usable = |root: &Path| {
        root.join(&name).as_os_str().len() <= MAX_SOCKET_DIR_BYTES
            && user.is_none_or(|u| reachable_by(root, u))
    };
    let root = if usable(&work_root) {
        work_root
    } else {
        std::env::temp_dir()
    };
    let dir = root.join(name);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| TargetError::io("create", &dir, e))?;
    if let Some(user) = user {
        std::os::unix::fs::chown(&dir, Some(user.uid), Some(user.gid))
            .map_err(|e| TargetError::io("hand to the postgres user", &dir, e))?;
    }
    Ok(dir)
}

/// Whether `user` may traverse every directory from `/` down to `dir`.
fn reachable_by(dir: &Path, user: ServerUser) -> bool {
    dir.ancestors().all(|ancestor| {
        let Ok(meta) = ancestor.metadata() else {
            return false;
        };
        let mode = meta.mode();
        let bit = if meta.uid() == user.uid {
            0o100
        } else if meta.gid() == user.gid {
            0o010
        } else {
            0o001
        };
        mode & bit != 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_version_first() {
        let root = tempfile::tempdir().unwrap();
        for version in ["9.6", "15", "13", "notes"] {
            std::fs::create_dir(root.path().join(version)).unwrap();
        }
        let dirs = versioned_bindirs(root.path());
        assert_eq!(
            dirs,
            ["15", "13", "9.6"].map(|v| root.path().join(v).join("bin"))
        );
    }

    #[test]
    fn reachability_follows_the_mode_bits() {
        let root = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            root.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let private = root.path().join("private");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&private)
            .unwrap();
        // SAFETY: getuid/getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let stranger = ServerUser {
            uid: uid + 4242,
            gid: gid + 4242,
        };
        assert!(reachable_by(root.path(), stranger));
        assert!(!reachable_by(&private, stranger));
        assert!(reachable_by(&private, ServerUser { uid, gid }));
    }
}
