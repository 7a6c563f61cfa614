//! corobench-spec
