//! corobench-store
