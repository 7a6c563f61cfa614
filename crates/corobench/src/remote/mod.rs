//! Everything about other hosts, in one place: the typed, versioned
//! messages `corobench serve` prints for its coordinator, the arguments of
//! each generator host's `corobench load`, the executor of a trial on other
//! hosts, and the transports that reach them (SSH, kubectl, this machine).
//! The runner schedules trials; it does not know which transport runs one.

pub mod executor;
pub mod load_args;
pub mod protocol;
pub mod transport;

pub use executor::RemoteTrials;
