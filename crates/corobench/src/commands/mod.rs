//! One module per subcommand.

pub mod load;
pub mod verify;
