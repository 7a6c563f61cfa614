//! On-CPU profiles of a target's process tree: Linux `perf record` sampling
//! the tree's call stacks at a fixed frequency ([`Recording`]), the samples
//! folded into one line per distinct stack ([`fold`]) and drawn as a flame
//! graph ([`flame_graph_svg`]). Folding and drawing are the `inferno`
//! crate's; the sampling is the system's `perf` (Debian package `linux-perf`).
//!
//! A profile is optional: where `perf` is missing or the kernel refuses it
//! (`perf_event_paranoid`), [`Recording::start`] or [`Recording::finish`]
//! says why, and the caller records the reason instead of a profile.

mod error;
mod fold;
mod record;
mod render;

pub use error::ProfileError;
pub use fold::{FoldedStacks, fold};
pub use record::{PERF_PROGRAM, Recording};
pub use render::flame_graph_svg;

/// How often `perf` samples each CPU's stack, in Hz. 99 rather than 100 so
/// the sampling does not run in lockstep with timers of round periods (a
/// server's 10 ms tick would otherwise be caught always or never); at this
/// rate a 10 s window of one busy CPU gives about 1,000 stacks, enough for
/// any frame above 1% of the time, and `perf` itself costs well under 1%.
pub const FREQUENCY_HZ: u32 = 99;
