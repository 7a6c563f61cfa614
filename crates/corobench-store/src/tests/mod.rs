//! Store tests. They live inside the crate because a few need to reach the
//! connection (to simulate a full disk); all others use the public API only.

mod fixtures;
mod migrations;
mod resume;
mod round_trip;
mod run_ids;
