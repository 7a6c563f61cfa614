//! The corobench result store: every run, scenario and trial in one SQLite
//! file. All SQL of corobench lives in this crate.
//!
//! The schema is versioned (`PRAGMA user_version`) and migrated on open by
//! the scripts in `src/migrations/`. Trials are committed one transaction
//! each as they end, so a crash loses at most the trial in flight and
//! `corobench run --resume` finds what is done with
//! [`Store::completed_trials`]. Headline figures are real columns, so the
//! file answers plain `sqlite3` queries; start from the `trial_results` view.
//!
//! Runs travel as run files ([`write_run_file`], [`read_run_file`]): one
//! versioned, compressed file of whole runs, which [`Store::import_runs`]
//! stores again exactly as they were, so a report of an imported run is the
//! report of the original.

mod error;
mod export;
mod hosts;
mod idle;
mod import;
mod profiles;
mod rows;
mod run_file;
mod runs;
mod scenarios;
mod schema;
mod store;
mod trials;

#[cfg(test)]
mod tests;

pub use error::StoreError;
pub use import::{DatabaseRuns, ImportOutcome, ImportedRun, runs_of_database};
pub use run_file::{
    RUN_FILE_FORMAT, RUN_FILE_VERSION, RunFileError, RunSource, read_run_file, write_run_file,
};
pub use runs::{LATEST, RunListing};
pub use schema::SCHEMA_VERSION;
pub use store::Store;
