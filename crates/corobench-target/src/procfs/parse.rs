//! Pure parsers for the `/proc` files corobench reads: a process's `stat`
//! (its group, parent and state for stopping a target; its CPU, memory and
//! threads for the sampler) and `status` (context switches). They take the
//! file's text and never touch the file system, so they are tested on
//! captured files.
//!
//! Process ids, parents and groups are `i32`: that is `pid_t` in the kernel
//! ABI and in libc, so they go to `kill`, `killpg` and `waitpid` as they
//! are, and `std::process::id`'s `u32` is the one conversion.

/// A `/proc` file did not have the shape the kernel documents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// `stat` has no `(` opening the command name.
    #[error("no `(` opening the command name")]
    NoCommStart,
    /// `stat` has no `)` after the `(` that opens the command name.
    #[error("no `)` closing the command name (truncated?)")]
    NoCommEnd,
    /// A field the parser needs is absent.
    #[error("field `{field}` is missing (truncated?)")]
    Missing { field: &'static str },
    /// A field is present but not a number.
    #[error("field `{field}` is not a number: `{value}`")]
    NotANumber { field: &'static str, value: String },
    /// The process state is not a single letter.
    #[error("field `state` is not a single letter: `{value}`")]
    BadState { value: String },
}

/// Voluntary and involuntary context switches of one thread, or summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CtxSwitches {
    pub voluntary: u64,
    pub involuntary: u64,
}

impl CtxSwitches {
    /// `self - earlier`, never negative: a counter that went backwards (a
    /// reused thread id) contributes nothing rather than a huge wrap-around.
    #[must_use]
    pub fn since(self, earlier: Self) -> Self {
        Self {
            voluntary: self.voluntary.saturating_sub(earlier.voluntary),
            involuntary: self.involuntary.saturating_sub(earlier.involuntary),
        }
    }

    pub fn add(&mut self, other: Self) {
        self.voluntary += other.voluntary;
        self.involuntary += other.involuntary;
    }
}

/// The fields of `/proc/<pid>/stat` corobench uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    /// One letter: `R` running, `S` sleeping, `Z` zombie, ...
    pub state: char,
    pub ppid: i32,
    /// The process group.
    pub pgrp: i32,
    /// CPU in user mode of the whole process (dead threads included), in clock ticks.
    pub utime_ticks: u64,
    /// CPU in kernel mode of the whole process, in clock ticks.
    pub stime_ticks: u64,
    pub num_threads: u32,
    /// When the process started, in clock ticks since boot.
    pub starttime_ticks: u64,
    /// Resident set size in pages.
    pub rss_pages: u64,
}

impl ProcStat {
    /// Whether the process still runs: zombies (`Z`) and dead tasks (`X`, `x`)
    /// have exited and only wait to be reaped.
    #[must_use]
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Names of the `stat` fields after the command name, in order (fields 3..=25
/// of proc(5)). `rsslim` is not used; requiring it makes a line cut inside
/// `rss`, the last field used, an error rather than a smaller number.
const STAT_FIELDS: [&str; 23] = [
    "state",
    "ppid",
    "pgrp",
    "session",
    "tty_nr",
    "tpgid",
    "flags",
    "minflt",
    "cminflt",
    "majflt",
    "cmajflt",
    "utime",
    "stime",
    "cutime",
    "cstime",
    "priority",
    "nice",
    "num_threads",
    "itrealvalue",
    "starttime",
    "vsize",
    "rss",
    "rsslim",
];

fn stat_index(field: &str) -> usize {
    STAT_FIELDS
        .iter()
        .position(|name| *name == field)
        .expect("only names from STAT_FIELDS are looked up")
}

fn number<T: std::str::FromStr>(text: &str, field: &'static str) -> Result<T, ParseError> {
    text.parse().map_err(|_| ParseError::NotANumber {
        field,
        value: text.to_owned(),
    })
}

/// Parses `/proc/<pid>/stat`.
///
/// The command name (`comm`) may contain spaces and parentheses, so it is
/// taken to end at the *last* `)` of the line; every other field is a number
/// or a single letter and cannot contain one.
///
/// # Errors
/// When the line is truncated or a field is not what proc(5) documents.
pub fn parse_stat(text: &str) -> Result<ProcStat, ParseError> {
    let open = text.find('(').ok_or(ParseError::NoCommStart)?;
    let close = text.rfind(')').ok_or(ParseError::NoCommEnd)?;
    if close < open {
        return Err(ParseError::NoCommEnd);
    }
    let pid = number(text[..open].trim(), "pid")?;
    let mut fields = [""; STAT_FIELDS.len()];
    let mut found = 0;
    for (slot, value) in fields
        .iter_mut()
        .zip(text[close + 1..].split_ascii_whitespace())
    {
        *slot = value;
        found += 1;
    }
    if found < STAT_FIELDS.len() {
        return Err(ParseError::Missing {
            field: STAT_FIELDS[found],
        });
    }
    let field = |name: &'static str| fields[stat_index(name)];
    Ok(ProcStat {
        pid,
        state: parse_state(field("state"))?,
        ppid: number(field("ppid"), "ppid")?,
        pgrp: number(field("pgrp"), "pgrp")?,
        utime_ticks: number(field("utime"), "utime")?,
        stime_ticks: number(field("stime"), "stime")?,
        num_threads: number(field("num_threads"), "num_threads")?,
        starttime_ticks: number(field("starttime"), "starttime")?,
        rss_pages: number(field("rss"), "rss")?,
    })
}

fn parse_state(text: &str) -> Result<char, ParseError> {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(letter), None) if letter.is_ascii_alphabetic() => Ok(letter),
        _ => Err(ParseError::BadState {
            value: text.to_owned(),
        }),
    }
}

/// The fields of `/proc/<pid>/status` (or `/proc/<pid>/task/<tid>/status`)
/// corobench uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStatus {
    /// `VmRSS`; absent for zombies and kernel threads, which have no memory.
    pub rss_bytes: Option<u64>,
    /// Threads of the whole process.
    pub threads: u32,
    /// Context switches of *this thread only*: for `/proc/<pid>/status` that is
    /// the main thread, so a multi-threaded process must be summed over
    /// `/proc/<pid>/task/*/status`.
    pub ctx: CtxSwitches,
}

/// Parses `/proc/<pid>/status`.
///
/// # Errors
/// When `Threads` or either context-switch line is missing or not a number.
pub fn parse_status(text: &str) -> Result<ProcStatus, ParseError> {
    let mut rss_bytes = None;
    let mut threads = None;
    let mut voluntary = None;
    let mut involuntary = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key {
            "VmRSS" => rss_bytes = Some(parse_kib(value)?),
            "Threads" => threads = Some(number(value, "Threads")?),
            "voluntary_ctxt_switches" => {
                voluntary = Some(number(value, "voluntary_ctxt_switches")?)
            }
            "nonvoluntary_ctxt_switches" => {
                involuntary = Some(number(value, "nonvoluntary_ctxt_switches")?);
            }
            _ => {}
        }
    }
    let missing = |field| ParseError::Missing { field };
    Ok(ProcStatus {
        rss_bytes,
        threads: threads.ok_or_else(|| missing("Threads"))?,
        ctx: CtxSwitches {
            voluntary: voluntary.ok_or_else(|| missing("voluntary_ctxt_switches"))?,
            involuntary: involuntary.ok_or_else(|| missing("nonvoluntary_ctxt_switches"))?,
        },
    })
}

/// `14276 kB` → bytes. The kernel writes every `Vm*` line in kB (KiB).
fn parse_kib(value: &str) -> Result<u64, ParseError> {
    let digits = value
        .strip_suffix("kB")
        .ok_or_else(|| ParseError::NotANumber {
            field: "VmRSS",
            value: value.to_owned(),
        })?;
    let kib: u64 = number(digits.trim(), "VmRSS")?;
    Ok(kib * 1024)
}

/// Whether a `/proc` directory entry names a process (or thread): all digits.
#[must_use]
pub fn parse_pid(name: &str) -> Option<i32> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok()
}
