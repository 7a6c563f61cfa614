//! corobench-load
