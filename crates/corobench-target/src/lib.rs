//! corobench-target
