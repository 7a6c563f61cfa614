//! Store tests. They live inside the crate because a few reach the
//! connection: to simulate a full disk and to check the raw columns.

mod exchange;
mod fixtures;
mod hosts;
mod migrations;
mod profiles;
mod resume;
mod round_trip;
mod run_ids;
