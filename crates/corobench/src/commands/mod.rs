//! One module per subcommand.

pub mod bench;
pub mod compare;
pub mod completions;
mod flamegraph;
pub mod format_arg;
pub mod k8s;
pub mod load;
mod load_counters;
pub mod man;
pub mod merge;
pub mod plan;
pub mod program;
pub mod report;
pub mod run;
pub mod runs;
pub mod serve;
pub mod shared;
pub mod suites;
pub mod targets;
pub mod verify;
