//! Spawning that `/stats` can count.

use std::future::Future;

use rust_common::tasks::TaskGuard;

/// Spawns `future` on the current runtime thread, counted while it runs.
pub fn spawn_counted<F: Future<Output = ()> + 'static>(future: F) {
    let guard = TaskGuard::new();
    compio::runtime::spawn(async move {
        let _guard = guard;
        future.await;
    })
    .detach();
}
