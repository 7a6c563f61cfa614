//! One module per subcommand.

pub mod load;
pub mod targets;
pub mod verify;
