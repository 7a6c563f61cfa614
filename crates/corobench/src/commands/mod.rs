//! One module per subcommand.

pub mod load;
