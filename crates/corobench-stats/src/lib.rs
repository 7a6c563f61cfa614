//! Statistics for corobench, as benchstat computes them: pure numerics on
//! `&[f64]`, deterministic, no I/O and no domain types.
//!
//! - [`summary`]: min, max, mean, geometric mean, R8 quantiles and the median.
//! - [`quantile_ci`](mod@quantile_ci): distribution-free order-statistic confidence intervals
//!   for the median (go-moremath's `QuantileCI`).
//! - [`utest`]: the two-sided Mann–Whitney U test with exact distributions
//!   (with and without ties) and the normal approximation.
//! - [`compare`]: relative deltas, benchstat's `~` / `± x%` / `p=… n=…`
//!   strings and the geometric mean of per-row ratios.
//! - [`bootstrap`]: the resampling and percentile interval the fits share.
//! - [`usl`]: the Universal Scalability Law fitted to throughput against
//!   concurrency, with bootstrap intervals for its parameters and peak.
//! - [`step_capacity`]: the highest open-loop rate at which an SLO holds,
//!   from pass/fail trials, by an isotonic step fit with a bootstrap interval.
//! - [`fit_line`]/[`fit_line_interval`]: a least-squares line with the t
//!   interval of its slope (bytes per idle connection).
//! - [`ratio`]: how many times larger one sample is than another (the
//!   Hodges–Lehmann ratio) with Moses's distribution-free interval.
//!
//! Where scipy and go-moremath disagree (only with tied values) this crate
//! follows go-moremath, because users check our figures against benchstat,
//! except where go-moremath's exact p with ties is wrong (0 or above 1); the
//! crate README lists each difference.

pub mod bootstrap;
pub mod compare;
mod error;
mod linalg;
mod line;
pub mod quantile_ci;
pub mod random;
pub mod ratio;
mod sample;
pub mod special;
pub mod step_capacity;
pub mod summary;
mod udist;
pub mod usl;
pub mod utest;

pub use bootstrap::Interval;
pub use compare::{
    format_delta, format_p_and_n, format_pct_range, format_signed_pct, geomean_of_ratios,
    relative_delta,
};
pub use error::StatsError;
pub use line::{LineFit, LineInterval, fit_line, fit_line_interval};
pub use quantile_ci::{
    IntervalMethod, OrderInterval, QuantileCi, median_ci, min_samples_for_median_ci, quantile_ci,
    quantile_ci_orders,
};
pub use ratio::{
    RatioCi, RatioIntervalMethod, hodges_lehmann_ratio, min_samples_for_ratio_ci, ratio_ci,
};
pub use step_capacity::{LocatedCapacity, StepCapacity, StepOptions, estimate_step_capacity};
pub use summary::{geometric_mean, max, mean, median, min, quantile};
pub use usl::{UslBootstrap, UslFit, UslPeak, bootstrap_usl, fit_usl};
pub use utest::{UTest, UTestMethod, mann_whitney_u_test, min_attainable_p, min_samples_to_detect};
