//! Samples CPU, memory, threads and context switches of a target's whole
//! process tree from `/proc`.
//!
//! The tree is the target's process group: every process a target forks
//! (nginx workers, php-fpm children, node cluster workers) inherits it.
//! [`Sampler::start`] opens a measured window and reads the group at a fixed
//! interval on its own thread; [`SamplerHandle::stop`] closes it and returns
//! a [`ResourceSeries`]. [`snapshot`] reads the group once, for the leak
//! check before and after load. The `/proc` parsers are corobench-target's
//! (`corobench_target::procfs`), which stops the same groups.
//!
//! [`ThreadCounters`] counts in the kernel what the same threads (and what
//! they start) cost over a window: system calls, context switches and minor
//! page faults, through `perf_event_open`.

mod counters;
mod error;
mod group;
mod ledger;
mod reader;
mod sampler;
mod series;
mod settle;
mod snapshot;
mod sys;
mod tree;

pub use corobench_target::procfs::ParseError;
pub use counters::{
    MAX_THREADS, REFUSE_ENV, ThreadCounters, group_counters, group_threads, own_threads,
};
pub use error::SamplerError;
pub use reader::PROC_ROOT;
pub use sampler::{DEFAULT_INTERVAL, Sampler, SamplerHandle};
pub use series::{ResourceSeries, summarize};
pub use settle::{SettleRule, SettledRss, settled_rss};
pub use snapshot::{ProcessTreeSnapshot, snapshot};
