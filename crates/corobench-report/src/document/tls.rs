//! What TLS cost the connections of the scenarios that spoke it: handshake
//! and connect times, the share of handshakes resumed and of handshakes
//! that failed, each with its confidence interval like any metric. Shown
//! beside the scenario table where a scenario of the group spoke TLS.

use corobench_model::{Metric, RunAnalysis};

use super::Grid;
use super::costs::{having, metrics_grid};

/// The TLS figures some scenario of `group` has, as one table; none when
/// no scenario of the group spoke TLS.
pub(crate) fn tls_grid(analysis: &RunAnalysis, group: &[usize]) -> Option<Grid> {
    let figures = having(analysis, group, Metric::TLS.into_iter());
    metrics_grid(analysis, group, &figures, "TLS")
}
