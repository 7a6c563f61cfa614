//! The contract server's faults: each one breaks exactly one rule of
//! `docs/contract.md`, so the verifier's tests can prove each rule is checked.

use std::fmt;
use std::str::FromStr;

/// One deliberate violation of the contract. Names are kebab-case, as the
/// binary's `--fault` flag takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// `/json` answers `{"msg":"hi"}` (rule json).
    WrongBody,
    /// No `Server` header on any response (header-server).
    MissingServer,
    /// No `Date` header on any response (header-date).
    MissingDate,
    /// No `Content-Type` header on any response (header-content-type).
    MissingContentType,
    /// No `Content-Length`: every body ends when the connection closes
    /// (header-content-length).
    MissingContentLength,
    /// The `Date` is computed once per connection and then repeated
    /// (date-not-cached).
    FrozenDate,
    /// An unknown path answers `200 Hello, World!` (not-found).
    UnknownPathOk,
    /// `/mixed` hashes one round too many (mixed).
    WrongMixedDigest,
    /// `/file` sends half the bytes asked for, with a matching
    /// `Content-Length` (file).
    TruncatedFile,
    /// `/io` answers at once, still claiming to have waited (io).
    IoNoWait,
    /// `/upload` reports a SHA-256 that is not the body's (upload).
    WrongUploadHash,
    /// Bodies are sent with `Transfer-Encoding: chunked` (header-content-length).
    Chunked,
    /// Bytes that arrive behind a request are thrown away, so pipelined
    /// requests go unanswered (pipelining).
    NoPipelining,
    /// A bad parameter is replaced by its default instead of `400` (bad-parameter).
    BadParameterOk,
    /// A known path with the wrong method is served as if the method were
    /// right, instead of `405` (method-not-allowed).
    WrongMethodOk,
    /// Every response carries `Connection: close` and the connection is
    /// closed (keep-alive).
    NoKeepAlive,
    /// `/stats` reports a model other than the configured one (stats).
    WrongStatsModel,
    /// `/db` reads the database once and repeats that row ever after (db).
    DbSkipsQuery,
    /// `/select1` is not served: `404`, an optional endpoint left out
    /// (select1 warns).
    NoSelect1,
    /// `/select1` queries are not counted in `/stats` `pool.acquires` (select1).
    PoolNotCounted,
    /// The binary ignores SIGTERM (sigterm); the in-process server has no
    /// signals and ignores this fault.
    IgnoreSigterm,
    /// The binary listens on 127.0.0.1 whatever `LISTEN_ADDR` says
    /// (listen-addr); the in-process server ignores this fault.
    IgnoreListenAddr,
    /// `/stats` counts every connection ever accepted as a task still
    /// running, as a server whose task per connection never ends would: no
    /// rule of the contract, but the leak check after a trial flags it.
    LeakTasks,
}

impl Fault {
    /// Every fault, in declaration order.
    pub const ALL: [Fault; 23] = [
        Fault::WrongBody,
        Fault::MissingServer,
        Fault::MissingDate,
        Fault::MissingContentType,
        Fault::MissingContentLength,
        Fault::FrozenDate,
        Fault::UnknownPathOk,
        Fault::WrongMixedDigest,
        Fault::TruncatedFile,
        Fault::IoNoWait,
        Fault::WrongUploadHash,
        Fault::Chunked,
        Fault::NoPipelining,
        Fault::BadParameterOk,
        Fault::WrongMethodOk,
        Fault::NoKeepAlive,
        Fault::WrongStatsModel,
        Fault::DbSkipsQuery,
        Fault::NoSelect1,
        Fault::PoolNotCounted,
        Fault::IgnoreSigterm,
        Fault::IgnoreListenAddr,
        Fault::LeakTasks,
    ];

    /// The kebab-case name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Fault::WrongBody => "wrong-body",
            Fault::MissingServer => "missing-server",
            Fault::MissingDate => "missing-date",
            Fault::MissingContentType => "missing-content-type",
            Fault::MissingContentLength => "missing-content-length",
            Fault::FrozenDate => "frozen-date",
            Fault::UnknownPathOk => "unknown-path-ok",
            Fault::WrongMixedDigest => "wrong-mixed-digest",
            Fault::TruncatedFile => "truncated-file",
            Fault::IoNoWait => "io-no-wait",
            Fault::WrongUploadHash => "wrong-upload-hash",
            Fault::Chunked => "chunked",
            Fault::NoPipelining => "no-pipelining",
            Fault::BadParameterOk => "bad-parameter-ok",
            Fault::WrongMethodOk => "wrong-method-ok",
            Fault::NoKeepAlive => "no-keep-alive",
            Fault::WrongStatsModel => "wrong-stats-model",
            Fault::DbSkipsQuery => "db-skips-query",
            Fault::NoSelect1 => "no-select1",
            Fault::PoolNotCounted => "pool-not-counted",
            Fault::IgnoreSigterm => "ignore-sigterm",
            Fault::IgnoreListenAddr => "ignore-listen-addr",
            Fault::LeakTasks => "leak-tasks",
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Fault {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Fault::ALL
            .into_iter()
            .find(|fault| fault.name() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
                format!("unknown fault {text:?}; known faults: {}", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_known_ones() {
        for fault in Fault::ALL {
            assert_eq!(fault.name().parse::<Fault>(), Ok(fault));
        }
        let error = "no-such".parse::<Fault>().unwrap_err();
        assert!(
            error.contains("\"no-such\"") && error.contains("frozen-date"),
            "{error}"
        );
    }
}
