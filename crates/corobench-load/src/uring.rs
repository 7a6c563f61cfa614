//! The io_uring backend.

use crate::core::{Shared, ThreadPlan, ThreadResult};
use crate::error::LoadError;

pub(crate) fn run_thread(_shared: &Shared, _plan: &ThreadPlan) -> Result<ThreadResult, LoadError> {
    Err(LoadError::Config(
        "the io_uring backend is not built yet".into(),
    ))
}
