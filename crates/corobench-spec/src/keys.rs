//! Every key a spec may use, per table: the resolver refuses others, and a
//! key written in the wrong table is pointed to its own.

/// The top level.
pub(crate) const TOP_LEVEL: &[&str] = &[
    "name",
    "description",
    "targets",
    "parameters",
    "run",
    "schedule",
    "workloads",
    "program",
    "baseline",
    "claims",
    "capacity",
    "hosts",
    // `[servers.NAME]`: the user's own servers, read into targets before
    // the spec is resolved (their keys are checked there).
    "servers",
];

/// `[hosts]`.
pub(crate) const HOSTS: &[&str] = &[
    "server",
    "generators",
    "server_cpus",
    "generator_cpus",
    "server_address",
    "listen",
    "corobench",
    "install_dir",
    "targets_dir",
    "ssh_config",
];

/// `[program]`.
pub(crate) const PROGRAM: &[&str] = &["server"];

/// `[run]`.
pub(crate) const RUN: &[&str] = &[
    "trials",
    "until_ci",
    "max_trials",
    "budget",
    "duration",
    "warmup",
    "idle",
    "timeout",
    "server_cpus",
    "generator_cpus",
    "generator_threads",
    "backend",
    "seed",
    "profile",
    "machine_probe",
];

/// `[capacity]`.
pub(crate) const CAPACITY: &[&str] = &[
    "slo",
    "start_rate",
    "growth",
    "max_rate",
    "min_rate",
    "trials_per_rate",
    "precision",
    "max_rates",
];

/// `[schedule]`.
pub(crate) const SCHEDULE: &[&str] = &[
    "connections",
    "rates",
    "keepalive",
    "pipeline",
    "tls",
    "protocol",
    "streams",
    "tls_resume",
];

/// One `[[workloads]]`.
pub(crate) const WORKLOAD: &[&str] = &[
    "name",
    "path",
    "method",
    "headers",
    "body",
    "body_file",
    "expect_status",
    "expect_body",
    "expect_header",
    "connections",
    "rates",
    "keepalive",
    "pipeline",
    "tls",
    "protocol",
    "streams",
    "tls_resume",
    "idle_connections",
    "background",
    "background_streams",
];

/// One `[[claims]]`.
pub(crate) const CLAIM: &[&str] = &[
    "source",
    "says",
    "workload",
    "metric",
    "a",
    "b",
    "ratio",
    "direction",
    "tolerance",
    "published",
];

/// Where `key` belongs, when it belongs to a table other than `table`.
pub(crate) fn home_elsewhere(key: &str, table: &[&str]) -> Option<&'static str> {
    let homes: [(&[&str], &str); 8] = [
        (TOP_LEVEL, "the top level"),
        (RUN, "[run]"),
        (SCHEDULE, "[schedule]"),
        (WORKLOAD, "[[workloads]]"),
        (PROGRAM, "[program]"),
        (CLAIM, "[[claims]]"),
        (CAPACITY, "[capacity]"),
        (HOSTS, "[hosts]"),
    ];
    homes
        .iter()
        .filter(|(keys, _)| !std::ptr::eq(*keys, table))
        .find(|(keys, _)| keys.contains(&key))
        .map(|(_, home)| *home)
}
