//! One module per subcommand.

pub mod compare;
pub mod load;
pub mod plan;
pub mod report;
pub mod run;
pub mod runs;
pub mod shared;
pub mod targets;
pub mod verify;
