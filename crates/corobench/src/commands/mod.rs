//! One module per subcommand.

pub mod bench;
pub mod claims;
pub mod compare;
pub mod completions;
pub mod export;
mod flamegraph;
pub mod format_arg;
pub mod import;
pub mod k8s;
pub mod load;
mod load_counters;
mod load_tls;
pub mod man;
pub mod merge;
pub mod pages;
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
