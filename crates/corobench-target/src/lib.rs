//! corobench-target: everything about the reference servers as OS processes.
//!
//! - [`Manifest`]: a validated `target.toml` ([`discover`], [`find_targets_dir`]),
//!   its [`Availability`] here, its parameters and tool versions, and its
//!   [`listing`] for people;
//! - [`BuildCache`]: builds keyed by a hash of the sources, made atomically;
//! - [`BuiltTarget::launch`] → [`RunningTarget`]: a direct child in its own
//!   process group, pinned to a [`CpuSet`], health-checked, stopped with
//!   SIGTERM then SIGKILL, and killed with its whole group when corobench
//!   dies in any way (a guardian process watches for that);
//! - [`BuiltTarget::spawn_program`] → [`RunningProgram`] → [`ProgramRun`]: a
//!   program target started the same way and waited for, with a time limit,
//!   a stop flag, its stdout and the tail of its stderr;
//! - [`Postgres`]: a throwaway PostgreSQL cluster with the contract's `world` table;
//! - [`ensure_payload`]: the file `/file` serves, byte by byte [`payload_byte`]:
//!   the one definition the verifier checks against and the test servers
//!   serve from;
//! - [`cgroup`]: the cgroup each started group runs in, which holds what
//!   leaves the process group (setsid, daemons), where one can be made;
//! - [`procfs`]: the `/proc` parsers (for stopping a target's group here, and
//!   for the resource sampler) and the members of a process group;
//! - [`parse_benchmarks`]: the Go benchmark lines program targets print;
//! - [`Protocol`] (what a trial speaks: HTTP/1.1 or HTTP/2, TLS or not), the
//!   manifest's [`Protocols`], and [`RunCertificates`]: a run's throwaway
//!   authority and the leaf its targets serve over TLS.
//!
//! This crate knows nothing about HTTP load, results or storage.

mod attached;
mod availability;
mod cache;
pub mod cgroup;
mod command;
mod cpuset;
mod error;
mod executable;
mod gobench;
mod group;
mod guardian;
mod hash;
mod health;
mod launch;
pub mod listing;
mod manifest;
mod parameters;
mod payload;
mod pipes;
mod postgres;
pub mod procfs;
mod program;
mod protocol;
mod running;
mod tail;
mod template;
pub mod tls;

pub use attached::{
    AttachedServer, AttachedTls, Attachment, ProcessRef, UrlError, attach, attached_provenance,
};
pub use availability::{Availability, find_on_path};
pub use cache::{BuildCache, BuildOutcome, BuiltTarget};
pub use cpuset::CpuSet;
pub use error::TargetError;
pub use executable::{executable, file_digest, server_provenance};
pub use gobench::{BenchmarkError, BenchmarkResult, Measurement, check_units, parse_benchmarks};
pub use group::{StopReport, install_child_reaper};
pub use hash::{
    ALWAYS_EXCLUDED, CONTENT_LIMIT_BYTES, SourceIdentity, source_hash, source_identity,
};
pub use launch::{LaunchOptions, free_port};
pub use manifest::{
    AvailableIf, BuildSpec, MANIFEST_FILE, MODELS, Manifest, NAME_RULE, PROTOCOL_KEYS,
    ProgramServer, ProgramSpec, Protocols, Readiness, RunSpec, SERVER_KEYS, StopSignal, Support,
    TargetKind, UNDECLARED, discover, find_targets_dir, inline_servers, is_valid_name,
};
pub use parameters::{NotAllowed, ParameterSpec};
pub use payload::{PAYLOAD_BYTES, PAYLOAD_FILE, ensure_payload, payload_byte};
pub use postgres::{DATABASE, Postgres, WORLD_ROWS};
pub use procfs::{children_of, group_members, live_members};
pub use program::{ProgramEnd, ProgramOptions, ProgramRun, RunningProgram, STDOUT_LIMIT};
pub use protocol::{HttpVersion, Protocol, UnknownProtocol};
pub use running::RunningTarget;
pub use template::{
    BUILD_PLACEHOLDERS, PROGRAM_PLACEHOLDERS, RUN_PLACEHOLDERS, SERVER_URL, TemplateError,
};
pub use tls::{RunCertificates, TlsFiles};
