//! Everything corobench shows a person: formatted figures, load summaries,
//! live progress of a load and of a run, and the table a run ends with. Results go to stdout, progress and warnings to stderr.

pub mod format;
pub mod live_run;
pub mod load_summary;
pub mod merge_summary;
pub mod progress;
pub mod run_progress;
pub mod run_summary;
