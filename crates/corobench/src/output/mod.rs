//! Everything corobench shows a person as it happens: live progress of a
//! load and of a run, and the table a run ends with (load summaries are
//! `corobench_report::load_summary`'s). Results go to stdout, progress and
//! warnings to stderr.

pub mod live_run;
pub mod progress;
pub mod run_progress;
pub mod run_summary;
