//! Everything about other hosts, in one place: the typed, versioned
//! messages `corobench serve` prints for its coordinator, the arguments of
//! each generator host's `corobench load`, the executor of a trial on other
//! hosts (with its leak check, kernel counters, machine-speed probe and
//! programs on a generator host), the orders `serve` takes, and the
//! transports that reach the hosts (SSH, kubectl, this machine).
//! The runner schedules trials; it does not know which transport runs one.

mod counters;
pub mod executor;
mod leak_check;
pub mod load_args;
mod probe;
mod program;
pub mod protocol;
mod serve_asks;
pub mod serve_orders;
pub mod transport;

pub use executor::RemoteTrials;
