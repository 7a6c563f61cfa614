//! corobench-verify
