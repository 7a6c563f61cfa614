//! What crosses between hosts: the messages `corobench serve` prints for
//! the coordinator that started it, typed and versioned in one place.

pub mod protocol;
