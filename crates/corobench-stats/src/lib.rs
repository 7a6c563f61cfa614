//! corobench-stats
