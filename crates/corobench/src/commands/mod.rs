//! One module per subcommand.

pub mod load;
pub mod plan;
pub mod run;
pub mod runs;
pub mod targets;
pub mod verify;
