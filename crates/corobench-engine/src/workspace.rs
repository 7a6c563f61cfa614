//! What `run`, `verify` and `serve` share before any target starts: the
//! build cache, the payload `/file` serves, and a scratch folder of this
//! process for uploads and logs, removed at the end unless something failed
//! and its logs are worth reading.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use corobench_target::{BuildCache, ensure_payload};

use crate::error::EngineError;
use crate::scratch;

/// The build cache, the payload and a scratch folder.
#[derive(Debug)]
pub struct Workspace {
    pub cache: BuildCache,
    /// Holds the payload `/file` serves.
    pub data_dir: PathBuf,
    /// This process's scratch folder.
    pub work_dir: PathBuf,
    keep: AtomicBool,
}

impl Workspace {
    /// Opens the build cache, writes the payload if missing, and makes a
    /// scratch folder named after `purpose` (`run`, `verify`, `serve`),
    /// after removing those of corobench processes that died.
    ///
    /// # Errors
    /// An unusable cache, temporary or payload folder.
    pub fn open(purpose: &str) -> Result<Self, EngineError> {
        let cache = BuildCache::from_env().map_err(|source| EngineError::Preparing {
            what: "choosing the build cache",
            source: Box::new(source),
        })?;
        scratch::check_temp_dir()?;
        scratch::remove_stale();
        // A corobench killed outright left its started servers' cgroups.
        corobench_target::cgroup::remove_stale();
        let work_dir = scratch::folder(purpose);
        std::fs::create_dir_all(&work_dir).map_err(|source| EngineError::Folder {
            path: work_dir.clone(),
            source,
        })?;
        let data_dir = cache.root().join("data");
        ensure_payload(&data_dir).map_err(|source| EngineError::Preparing {
            what: "writing the payload /file serves",
            source: Box::new(source),
        })?;
        Ok(Self {
            cache,
            data_dir,
            work_dir,
            keep: AtomicBool::new(false),
        })
    }

    /// Keeps the scratch folder when the workspace ends: something failed
    /// and its logs are there.
    pub fn keep_logs(&self) {
        self.keep.store(true, Ordering::Relaxed);
    }

    /// Whether the scratch folder will be kept.
    #[must_use]
    pub fn keeps_logs(&self) -> bool {
        self.keep.load(Ordering::Relaxed)
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        if !self.keep.load(Ordering::Relaxed) {
            let _ = std::fs::remove_dir_all(&self.work_dir);
        }
    }
}
