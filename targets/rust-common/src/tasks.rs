//! Tasks alive across all threads of a raw-socket target, for `/stats`.
//!
//! Single-threaded runtimes have no global task count; the targets wrap
//! what they spawn in a [`TaskGuard`] instead (one relaxed atomic add per
//! task start and end, not per request).

use std::sync::atomic::{AtomicU64, Ordering};

static ALIVE_TASKS: AtomicU64 = AtomicU64::new(0);

/// Counts one task for as long as the guard lives.
#[derive(Debug)]
pub struct TaskGuard(());

impl TaskGuard {
    #[must_use = "the task is counted only while the guard lives"]
    pub fn new() -> Self {
        ALIVE_TASKS.fetch_add(1, Ordering::Relaxed);
        Self(())
    }
}

impl Default for TaskGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TaskGuard {
    fn drop(&mut self) {
        ALIVE_TASKS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// `task`, counted from now until it ends or is dropped: what a runtime
/// hands its spawn.
pub fn counted<F: Future>(task: F) -> impl Future<Output = F::Output> {
    let guard = TaskGuard::new();
    async move {
        let _guard = guard;
        task.await
    }
}

/// Guarded tasks alive now.
pub fn alive() -> u64 {
    ALIVE_TASKS.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_count_while_they_live() {
        // Other tests of this crate create no guards, so the count is ours.
        let before = alive();
        let first = TaskGuard::new();
        let second = TaskGuard::new();
        assert_eq!(alive(), before + 2);
        drop(first);
        assert_eq!(alive(), before + 1);
        drop(second);
        assert_eq!(alive(), before);
    }

    #[test]
    fn a_counted_task_counts_from_its_creation_until_dropped() {
        let before = alive();
        let task = counted(async {});
        assert_eq!(alive(), before + 1);
        drop(task);
        assert_eq!(alive(), before);
    }
}
