//! What crosses between hosts, in one place: the typed, versioned messages
//! `corobench serve` prints for its coordinator and the orders it takes
//! from it, and the arguments of each generator host's `corobench load`.

pub mod load_args;
pub mod protocol;
pub mod serve_orders;
