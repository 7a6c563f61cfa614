//! Ctrl-C and SIGTERM: the first asks the work in progress to stop and keep
//! what it measured; a second one ends corobench at once.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context as _;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// Installs the handlers and returns the flag the first signal sets.
///
/// # Errors
/// When the handlers cannot be installed.
pub fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM] {
        // The conditional shutdown must be registered first: it checks the
        // flag before the second handler sets it.
        flag::register_conditional_shutdown(signal, 130, Arc::clone(&stop))
            .context("cannot install the signal handlers")?;
        flag::register(signal, Arc::clone(&stop)).context("cannot install the signal handlers")?;
    }
    Ok(stop)
}
