//! The build cache key and a user server's identity in a run's provenance.
//!
//! A target with a build (or a reference target, whose folder is its
//! source): a SHA-256 over the relative path, executable bit and content of
//! every file a build reads, in a stable (sorted) order. Left out: version
//! control, build and dependency output ([`ALWAYS_EXCLUDED`]), hidden files
//! and folders, SQLite databases (a results database kept beside a server
//! is no input of its build) and anything that is not a regular file or a
//! symlink (a FIFO is never opened). A file larger than
//! [`CONTENT_LIMIT_BYTES`] counts by its size and modification time, not
//! its content, so that a large data file beside the sources does not cost
//! a read of it on every run.
//!
//! A user's server without a build command has no sources corobench
//! builds: its identity is its command line and the SHA-256 of the
//! executable that command runs, nothing else of its folder.

use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::error::TargetError;
use crate::manifest::Manifest;

/// Never part of a build's sources: VCS data and build or dependency output.
pub const ALWAYS_EXCLUDED: &[&str] = &[".git", "target", "node_modules", ".venv", "__pycache__"];

/// Files larger than this count by size and modification time, not content.
pub const CONTENT_LIMIT_BYTES: u64 = 32 * 1024 * 1024;

/// The first bytes of every SQLite database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// What identifies a target's code, and what of it was not read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceIdentity {
    /// The lower-case hex SHA-256 ([`source_hash`]).
    pub hash: String,
    /// The inputs larger than [`CONTENT_LIMIT_BYTES`], counted by their
    /// size and modification time, not read: (path relative to the
    /// target's folder, bytes), in the order hashed.
    pub unread: Vec<(String, u64)>,
}

/// The lower-case hex SHA-256 of what identifies `manifest`'s code: its
/// folder and its `[build] inputs` (folders or single files); for a user's
/// server without a build, its command line and executable.
///
/// # Errors
/// An input folder that does not exist, or a file that cannot be read.
pub fn source_hash(manifest: &Manifest) -> Result<String, TargetError> {
    source_identity(manifest).map(|identity| identity.hash)
}

/// [`source_hash`], with the inputs that were too large to read.
///
/// # Errors
/// As [`source_hash`].
pub fn source_identity(manifest: &Manifest) -> Result<SourceIdentity, TargetError> {
    if manifest.build.is_none() && !manifest.contract {
        return Ok(SourceIdentity {
            hash: server_identity(manifest),
            unread: Vec::new(),
        });
    }
    let exclude = manifest
        .build
        .as_ref()
        .map(|b| b.exclude.as_slice())
        .unwrap_or_default();
    let mut roots = vec![(String::new(), manifest.dir.clone())];
    for input in manifest.build.iter().flat_map(|b| &b.inputs) {
        let dir = manifest.dir.join(input);
        if !dir.exists() {
            return Err(TargetError::Manifest {
                path: manifest.path(),
                line: None,
                key: "build.inputs".into(),
                message: format!("{} does not exist", dir.display()),
            });
        }
        roots.push((format!("{}/", input.display()), dir));
    }
    let mut hasher = Sha256::new();
    let mut unread = Vec::new();
    for (prefix, root) in &roots {
        if root.is_file() {
            hash_entry(&mut hasher, prefix.trim_end_matches('/'), root, &mut unread)?;
            continue;
        }
        let mut files = Vec::new();
        walk(root, root, exclude, &mut files)?;
        files.sort();
        for relative in files {
            let path = root.join(&relative);
            hash_entry(
                &mut hasher,
                &format!("{prefix}{relative}"),
                &path,
                &mut unread,
            )?;
        }
    }
    Ok(SourceIdentity {
        hash: hex(&hasher.finalize()),
        unread,
    })
}

/// A server without a build: its command line and the digest of the
/// executable its first word names (or that none was found).
fn server_identity(manifest: &Manifest) -> String {
    let mut hasher = Sha256::new();
    for word in &manifest.run.command {
        hasher.update(word.as_bytes());
        hasher.update(b"\0");
    }
    let program = crate::executable::resolve(manifest, &manifest.dir, None);
    let digest = program.as_deref().map(crate::executable::file_digest);
    match digest {
        Some(Ok(digest)) => hasher.update(digest.as_bytes()),
        Some(Err(_)) => hasher.update(b"unreadable"),
        None => hasher.update(b"not found"),
    }
    hex(&hasher.finalize())
}

/// Collects the paths (relative to `root`, `/`-separated) of every regular
/// file and symlink under `dir` that no exclusion covers: FIFOs, sockets
/// and devices are never opened.
fn walk(
    root: &Path,
    dir: &Path,
    exclude: &[String],
    files: &mut Vec<String>,
) -> Result<(), TargetError> {
    let entries = std::fs::read_dir(dir).map_err(|e| TargetError::io("list", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| TargetError::io("list", dir, e))?;
        let path = entry.path();
        let relative = relative_string(root, &path);
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_excluded(&name, &relative, exclude) {
            continue;
        }
        let kind = entry
            .file_type()
            .map_err(|e| TargetError::io("inspect", &path, e))?;
        if kind.is_dir() {
            walk(root, &path, exclude, files)?;
        } else if kind.is_file() || kind.is_symlink() {
            files.push(relative);
        }
    }
    Ok(())
}

fn relative_string(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<_> = relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy()),
            _ => None,
        })
        .collect();
    parts.join("/")
}

/// An exclusion with a `/` is a path relative to the root; without one it is
/// a name (`*` and `?` allowed) matched at any depth. Hidden names are
/// always excluded.
fn is_excluded(name: &str, relative: &str, exclude: &[String]) -> bool {
    ALWAYS_EXCLUDED.contains(&name)
        || name.starts_with('.')
        || exclude.iter().any(|pattern| {
            let pattern = pattern.trim_start_matches("./").trim_end_matches('/');
            if pattern.contains('/') {
                relative == pattern || relative.starts_with(&format!("{pattern}/"))
            } else {
                glob_match(pattern.as_bytes(), name.as_bytes())
            }
        })
}

fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    match (pattern.first(), text.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            glob_match(&pattern[1..], text) || (!text.is_empty() && glob_match(pattern, &text[1..]))
        }
        (Some(b'?'), Some(_)) => glob_match(&pattern[1..], &text[1..]),
        (Some(p), Some(t)) if p == t => glob_match(&pattern[1..], &text[1..]),
        _ => false,
    }
}

/// Adds the file at `path` to `hasher`; a file too large to read is added
/// by its size and time, and to `unread`.
fn hash_entry(
    hasher: &mut Sha256,
    relative: &str,
    path: &Path,
    unread: &mut Vec<(String, u64)>,
) -> Result<(), TargetError> {
    let meta = path
        .symlink_metadata()
        .map_err(|e| TargetError::io("inspect", path, e))?;
    if meta.file_type().is_symlink() {
        let target: PathBuf =
            std::fs::read_link(path).map_err(|e| TargetError::io("read the link", path, e))?;
        hasher.update(b"L");
        hasher.update(relative.as_bytes());
        hasher.update(b"\0");
        hasher.update(target.to_string_lossy().as_bytes());
        hasher.update(b"\0");
        return Ok(());
    }
    let executable = meta.permissions().mode() & 0o111 != 0;
    if meta.len() > CONTENT_LIMIT_BYTES {
        // Too large to read on every run: its size and time of change.
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        hasher.update(if executable { b"x" } else { b"f" });
        hasher.update(relative.as_bytes());
        hasher.update(b"\0");
        hasher.update(meta.len().to_le_bytes());
        hasher.update(modified.to_le_bytes());
        unread.push((relative.to_owned(), meta.len()));
        return Ok(());
    }
    let mut file =
        crate::executable::open_regular(path).map_err(|e| TargetError::io("read", path, e))?;
    let mut head = Vec::with_capacity(SQLITE_HEADER.len());
    (&mut file)
        .take(SQLITE_HEADER.len() as u64)
        .read_to_end(&mut head)
        .map_err(|e| TargetError::io("read", path, e))?;
    if head == SQLITE_HEADER || is_sqlite_companion(path) {
        // A database (a results database kept beside the server) is data
        // its build does not read.
        return Ok(());
    }
    hasher.update(if executable { b"X" } else { b"F" });
    hasher.update(relative.as_bytes());
    hasher.update(b"\0");
    hasher.update(meta.len().to_le_bytes());
    hasher.update(&head);
    std::io::copy(&mut file, hasher).map_err(|e| TargetError::io("read", path, e))?;
    Ok(())
}

/// The write-ahead log, shared memory or rollback journal of a SQLite
/// database beside it.
fn is_sqlite_companion(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    ["-wal", "-shm", "-journal"].iter().any(|suffix| {
        name.strip_suffix(suffix).is_some_and(|database| {
            let mut head = [0u8; 16];
            crate::executable::open_regular(&path.with_file_name(database))
                .and_then(|mut f| f.read_exact(&mut head))
                .is_ok_and(|()| &head == SQLITE_HEADER)
        })
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match(b"*.log", b"build.log"));
        assert!(glob_match(b"*", b""));
        assert!(glob_match(b"a?c", b"abc"));
        assert!(!glob_match(b"*.log", b"build.log.txt"));
        assert!(!glob_match(b"a?c", b"ac"));
        assert!(glob_match(b"node_modules", b"node_modules"));
    }

    #[test]
    fn exclusions_by_name_and_by_path() {
        let exclude = vec!["*.tmp".to_string(), "./docs/drafts/".to_string()];
        assert!(is_excluded(".git", ".git", &[]));
        assert!(is_excluded("node_modules", "web/node_modules", &[]));
        assert!(is_excluded("x.tmp", "src/x.tmp", &exclude));
        assert!(is_excluded("drafts", "docs/drafts", &exclude));
        assert!(is_excluded("a.md", "docs/drafts/a.md", &exclude));
        assert!(!is_excluded("drafts", "src/drafts", &exclude));
        assert!(!is_excluded("main.go", "main.go", &exclude));
    }
}
