//! Tasks alive across all runtime threads, for `/stats`.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

static ALIVE_TASKS: AtomicU64 = AtomicU64::new(0);

/// Counts one task for as long as it lives.
struct TaskGuard;

impl TaskGuard {
    fn new() -> Self {
        ALIVE_TASKS.fetch_add(1, Ordering::Relaxed);
        Self
    }
}

impl Drop for TaskGuard {
    fn drop(&mut self) {
        ALIVE_TASKS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Spawns `future` on the current runtime thread, counted while it runs.
pub fn spawn_counted<F: Future<Output = ()> + 'static>(future: F) {
    let guard = TaskGuard::new();
    compio::runtime::spawn(async move {
        let _guard = guard;
        future.await;
    })
    .detach();
}

/// Connection and database-driver tasks alive now, on every thread.
pub fn alive() -> u64 {
    ALIVE_TASKS.load(Ordering::Relaxed)
}
