//! The one set of defaults every way in shares: a spec that does not say,
//! `corobench bench` and `corobench load` (docs/methodology.md, "One set of
//! defaults", says why each value).

use std::time::Duration;

/// Connections per scenario: enough to keep a one-core server of any
/// model busy (a closed loop's concurrency is its connection count), few
/// enough for one generator core and any file-descriptor limit.
pub const DEFAULT_CONNECTIONS: u32 = 64;

/// Trials per scenario: the fewest whose median has a bounded 95% interval,
/// and whose comparisons can reach p ≤ 0.05 (with 6 against 6 the smallest
/// Mann–Whitney p is 0.002; with 3 against 3 it is 0.1, so no difference
/// could ever be significant).
pub const DEFAULT_TRIALS: u32 = 6;

/// Discarded load before each measured window: long enough for the
/// servers' first moments (workers, buffers, heap) to pass, short next to
/// the window.
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(1);

/// Each trial's measured window.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(5);
