//! `POST /upload`: the size limit, the running digest and the temporary file name.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::digest::hex_lower;
use crate::{ContractError, Reply};

/// 64 MiB: larger declared bodies are answered 413 without being read.
pub const MAX_UPLOAD_BYTES: u64 = 64 * 1024 * 1024;

/// Rejects a declared body length above the limit.
pub fn check_declared_len(declared_bytes: u64) -> Result<(), ContractError> {
    if declared_bytes > MAX_UPLOAD_BYTES {
        Err(ContractError::PayloadTooLarge { declared_bytes })
    } else {
        Ok(())
    }
}

/// The SHA-256 and byte count of a body, fed chunk by chunk as it streams.
#[derive(Debug, Default, Clone)]
pub struct UploadDigest {
    hasher: Sha256,
    bytes: u64,
}

impl UploadDigest {
    pub fn update(&mut self, chunk: &[u8]) {
        self.hasher.update(chunk);
        self.bytes += chunk.len() as u64;
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Fails once the streamed bytes pass the limit (bodies without a
    /// declared length are counted as they arrive).
    pub fn check_limit(&self) -> Result<(), ContractError> {
        check_declared_len(self.bytes)
    }

    /// The `200` answer: `{"bytes":N,"sha256":"…"}`.
    pub fn finish(self) -> Reply {
        let digest = hex_lower(&self.hasher.finalize());
        Reply::uploaded(self.bytes, &digest)
    }
}

/// A fresh file name in `upload_dir`, unique within this process and among
/// processes (the pid is part of it).
pub fn temp_path(upload_dir: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let sequence = NEXT.fetch_add(1, Ordering::Relaxed);
    static PID: OnceLock<u32> = OnceLock::new();
    let pid = PID.get_or_init(std::process::id);
    upload_dir.join(format!("upload-{pid}-{sequence}.part"))
}

/// Removes this process's unfinished upload files, for a target that exits
/// on SIGTERM with uploads in flight. Returns how many were removed.
pub fn remove_own_temp_files(upload_dir: &Path) -> usize {
    let prefix = format!("upload-{}-", std::process::id());
    let Ok(entries) = std::fs::read_dir(upload_dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .filter(|entry| std::fs::remove_file(entry.path()).is_ok())
        .count()
}

/// The 500 a target answers when the temporary file cannot be written.
pub fn unwritable(path: &Path, source: &std::io::Error) -> ContractError {
    ContractError::Internal {
        message: format!(
            "cannot write upload to {}: {source} (check UPLOAD_DIR)",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_body_is_the_sha256_of_nothing() {
        let reply = UploadDigest::default().finish();
        assert_eq!(
            std::str::from_utf8(&reply.body).expect("utf-8"),
            r#"{"bytes":0,"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}"#
        );
    }

    #[test]
    fn chunks_hash_like_the_whole() {
        let mut digest = UploadDigest::default();
        digest.update(b"ab");
        digest.update(b"c");
        let body = digest.finish().body;
        assert_eq!(
            std::str::from_utf8(&body).expect("utf-8"),
            r#"{"bytes":3,"sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}"#
        );
    }

    #[test]
    fn limit_is_inclusive_at_64_mib() {
        assert!(check_declared_len(MAX_UPLOAD_BYTES).is_ok());
        assert_eq!(
            check_declared_len(MAX_UPLOAD_BYTES + 1)
                .unwrap_err()
                .status(),
            413
        );
    }

    #[test]
    fn removes_only_this_process_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let own = temp_path(dir.path());
        let foreign = dir.path().join("upload-1-0.part");
        std::fs::write(&own, b"x").expect("write own");
        std::fs::write(&foreign, b"y").expect("write foreign");
        assert_eq!(remove_own_temp_files(dir.path()), 1);
        assert!(!own.exists());
        assert!(foreign.exists());
    }

    #[test]
    fn temp_paths_differ() {
        let dir = Path::new("/tmp");
        assert_ne!(temp_path(dir), temp_path(dir));
        assert!(temp_path(dir).starts_with(dir));
    }
}
