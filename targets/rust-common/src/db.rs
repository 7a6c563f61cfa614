//! `/db`: the query, the random id and what a missing database looks like.

use crate::ContractError;

/// One row of `world` by primary key; `$1` is an `int4`.
pub const WORLD_QUERY: &str = "SELECT id, randomnumber FROM world WHERE id = $1";

/// Ids in `world` are `1..=10000`.
pub const WORLD_ROWS: i32 = 10_000;

/// A uniformly random id of `world` (per-thread generator, no lock).
pub fn random_world_id() -> i32 {
    fastrand::i32(1..=WORLD_ROWS)
}

/// The 503 for a target started without `DATABASE_URL`.
pub fn not_configured() -> ContractError {
    ContractError::DatabaseUnavailable {
        reason: "DATABASE_URL is not set".into(),
    }
}

/// The 503 for a database that refused, timed out or broke.
pub fn unavailable(reason: impl std::fmt::Display) -> ContractError {
    ContractError::DatabaseUnavailable {
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_stay_in_the_table() {
        let ids: Vec<i32> = (0..10_000).map(|_| random_world_id()).collect();
        assert!(ids.iter().all(|id| (1..=WORLD_ROWS).contains(id)));
        // 10,000 draws from 10,000 values: far more than 100 distinct ones.
        let mut distinct = ids.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() > 100);
    }

    #[test]
    fn unavailable_is_503() {
        assert_eq!(not_configured().status(), 503);
        assert_eq!(
            unavailable("connection refused").to_string(),
            "database unavailable: connection refused"
        );
    }
}
