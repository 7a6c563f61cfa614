//! What the targets' database pools counted: connection reuse, checkouts
//! that waited, and the mean wait for a connection, for the scenarios whose
//! target reports its pool in `/stats`. The wait is the queueing part of a
//! request's latency that the pool itself measured.

use corobench_model::{Metric, PoolFigure, RunAnalysis};

use super::Grid;
use super::costs::{having, metrics_grid};

/// The pool figures some scenario of `group` has, as one table; none when
/// no target of the group reports its pool.
pub(crate) fn pool_grid(analysis: &RunAnalysis, group: &[usize]) -> Option<Grid> {
    let figures = having(
        analysis,
        group,
        PoolFigure::ALL.into_iter().map(Metric::Pool),
    );
    metrics_grid(analysis, group, &figures, "database pool")
}
