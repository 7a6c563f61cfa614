//! corobench-sampler
