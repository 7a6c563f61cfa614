//! corobench-testkit
