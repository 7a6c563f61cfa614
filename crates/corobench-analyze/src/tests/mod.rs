//! Tests of the analysis on runs built in memory, with values chosen so the
//! statistics are known (p-values from the exact U distribution, intervals
//! from the binomial order statistics).

mod across_machines;
mod claims;
mod comparisons;
mod counters;
mod gate;
mod goal;
mod machine;
mod memory;
mod summaries;
mod usl;
