//! Everything corobench shows a person: formatted figures, load summaries,
//! live progress. Results go to stdout, progress and warnings to stderr.

pub mod format;
pub mod load_summary;
pub mod progress;
