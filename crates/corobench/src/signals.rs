//! Ctrl-C and SIGTERM: the first asks the work in progress to stop and keep
//! what it measured; a second one ends corobench at once, giving the
//! terminal back first if the live view holds it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::{flag, low_level};

/// The exit status of a process ended by a second Ctrl-C (128 + SIGINT).
const FORCED_EXIT: i32 = 130;

/// Installs the handlers and returns the flag the first signal sets.
///
/// # Errors
/// When the handlers cannot be installed.
pub fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM] {
        // The forced exit must be registered first: it checks the flag
        // before the second handler sets it.
        let already = Arc::clone(&stop);
        let forced_exit = move || {
            if already.load(Ordering::SeqCst) {
                corobench_live::restore_for_exit();
                low_level::exit(FORCED_EXIT);
            }
        };
        // SAFETY: the action is async-signal-safe: an atomic load, then
        // restore_for_exit (atomics, write(2), tcsetattr(3)) and _exit(2).
        unsafe { low_level::register(signal, forced_exit) }
            .context("cannot install the signal handlers")?;
        flag::register(signal, Arc::clone(&stop)).context("cannot install the signal handlers")?;
    }
    Ok(stop)
}
