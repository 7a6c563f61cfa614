//! The corobench result store: every run, scenario and trial in one SQLite
//! file. All SQL of corobench lives in this crate.
//!
//! The schema is versioned (`PRAGMA user_version`) and migrated on open by
//! the scripts in `src/migrations/`. Trials are committed one transaction
//! each as they end, so a crash loses at most the trial in flight and
//! `corobench run --resume` finds what is done with
//! [`Store::completed_trials`]. Headline figures are real columns, so the
//! file answers plain `sqlite3` queries; start from the `trial_results` view.

mod error;
mod hosts;
mod idle;
mod profiles;
mod rows;
mod runs;
mod scenarios;
mod schema;
mod store;
mod trials;

#[cfg(test)]
mod tests;

pub use error::StoreError;
pub use runs::{LATEST, RunListing};
pub use schema::SCHEMA_VERSION;
pub use store::Store;
