//! Which program a server's command runs, and its SHA-256: the provenance
//! that tells two runs of "the same" server apart when the binary changed.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::cache::BuiltTarget;
use crate::manifest::Manifest;
use crate::template;

/// The executable the first word of the run command names, with `{out}`,
/// `{dir}` and `{cache}` put in; a relative path is the target folder's, a
/// bare name is looked up on PATH. `None` when it cannot be found.
#[must_use]
pub fn executable(built: &BuiltTarget) -> Option<PathBuf> {
    resolve(&built.manifest, &built.out_dir, Some(&built.cache_root))
}

/// [`executable`] of `manifest` built into `out_dir`; without a cache root
/// a command that names `{cache}` resolves to nothing.
pub(crate) fn resolve(
    manifest: &Manifest,
    out_dir: &Path,
    cache_root: Option<&Path>,
) -> Option<PathBuf> {
    let first = manifest.run.command.first()?;
    let values: BTreeMap<String, String> = [
        ("out", Some(out_dir)),
        ("dir", Some(manifest.dir.as_path())),
        ("cache", cache_root),
    ]
    .into_iter()
    .filter_map(|(name, path)| Some((name.to_owned(), path?.display().to_string())))
    .collect();
    let program = template::expand(first, &values).ok()?;
    let path = Path::new(&program);
    if path.components().count() > 1 {
        let full = manifest.dir.join(path);
        return full.is_file().then_some(full);
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(path))
        .find(|candidate| candidate.is_file())
}

/// `sha256:HEX` of the file at `path`.
///
/// # Errors
/// The file cannot be read.
pub fn file_digest(path: &Path) -> std::io::Result<String> {
    let mut file = open_regular(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    Ok(format!("sha256:{hex}"))
}

/// What a run records of a user's server: its command line, the
/// executable that ran with its digest (or why there is none), and the
/// build inputs too large to read, which count by size and time alone.
#[must_use]
pub fn server_provenance(built: &BuiltTarget) -> Vec<(String, String)> {
    let name = &built.manifest.name;
    let command = built.manifest.run.command.join(" ");
    let executable = match executable(built) {
        Some(path) => match file_digest(&path) {
            Ok(digest) => format!("{digest} {}", path.display()),
            Err(e) => format!("{} (unreadable: {e})", path.display()),
        },
        None => "not found on PATH or in the server's folder".to_owned(),
    };
    let mut provenance = vec![
        (format!("{name} command"), command),
        (format!("{name} executable"), executable),
    ];
    if !built.unread_sources.is_empty() {
        provenance.push((
            format!("{name} sources"),
            unread_note(&built.unread_sources),
        ));
    }
    provenance
}

/// `data.bin (3072 MiB) counted by size and modification time, not
/// content: …`, for the inputs a source hash did not read (each larger
/// than the limit, so MiB fit them all).
fn unread_note(unread: &[(String, u64)]) -> String {
    let files: Vec<String> = unread
        .iter()
        .map(|(path, bytes)| format!("{path} ({} MiB)", bytes >> 20))
        .collect();
    format!(
        "{} counted by size and modification time, not content: files over {} MiB are not \
         read when the sources are hashed",
        files.join(", "),
        crate::CONTENT_LIMIT_BYTES >> 20
    )
}

/// Opens `path` for reading only if it is a regular file: the open never
/// waits (a FIFO put where a file was expected would block it until a
/// writer came), and anything else is refused before a byte is read.
///
/// # Errors
/// The file cannot be opened, or is not a regular file.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a socket or a device)",
        ));
    }
    Ok(file)
}
