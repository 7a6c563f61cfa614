//! Helpers shared by the fixture tests.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::path::PathBuf;

use serde::de::DeserializeOwned;

/// Relative tolerance for comparisons with reference values: both sides are
/// double-precision computations of the same closed-form quantity.
pub const REL_TOL: f64 = 1e-9;

/// Path of a committed fixture file.
pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Reads and parses a JSON fixture, naming the file on failure.
pub fn read_json<T: DeserializeOwned>(name: &str) -> T {
    let path = fixture_path(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
}

/// Asserts |actual − expected| ≤ REL_TOL · |expected| (exact equality for 0).
#[track_caller]
pub fn assert_close(actual: f64, expected: f64, context: &str) {
    let tolerance = REL_TOL * expected.abs();
    assert!(
        (actual - expected).abs() <= tolerance,
        "{context}: got {actual:e}, expected {expected:e} (relative tolerance {REL_TOL:e})"
    );
}
