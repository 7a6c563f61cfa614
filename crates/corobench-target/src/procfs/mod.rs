//! `/proc`: its parsers, and which processes belong to a process group.

mod groups;
mod listening;
mod parse;

pub(crate) use groups::await_gone;
pub use groups::{children_of, group_members, live_members};
pub use listening::{ipv6_only, listening_ports, listening_ports_checked};
pub use parse::{
    CtxSwitches, ParseError, ProcStat, ProcStatus, parse_pid, parse_stat, parse_status,
};
