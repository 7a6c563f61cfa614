//! The wall clock, as stored: milliseconds since the Unix epoch.

/// Now, in milliseconds since the Unix epoch (0 if the clock is before it).
#[must_use]
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
