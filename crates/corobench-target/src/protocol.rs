//! What a trial speaks to its target (docs/contract.md, "Protocols"): the
//! scenario's protocol, a word of the shared vocabulary.

pub use corobench_model::protocol::{HttpVersion, Protocol, UnknownProtocol};
