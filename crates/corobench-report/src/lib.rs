//! corobench-report
