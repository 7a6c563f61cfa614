//! The range of every number a user gives a load run, checked once with a
//! message that names the setting ([`Setting`]: the caller says where it
//! was set). Inside these bounds no arithmetic of the
//! engine (nanoseconds, deadlines, rates × time, counts) comes near overflow,
//! so the engine can trust the values afterwards.

use std::time::Duration;

use corobench_model::Schedule;

use crate::error::{LoadError, Setting};

/// The longest measured window, warm-up and timeout: a day. It keeps every
/// deadline (warm-up + window, in nanoseconds) nine orders of magnitude
/// below `u64::MAX`, and the per-second timeline under 2 × 86,400 rows.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// The most requests a `-n` run may ask for: 2^53, the largest count a JSON
/// number (an IEEE double) holds exactly.
pub const MAX_REQUESTS: u64 = 1 << 53;

/// The most generator threads: far beyond any core count a generator runs
/// on, and few enough that spawning them cannot exhaust the process.
pub const MAX_THREADS: u32 = 1024;

/// The lowest open-loop rate: one request every 1000 s.
pub const MIN_RATE_PER_S: f64 = 0.001;

/// The highest open-loop rate per connection. A connection carries one
/// request at a time, and no TCP round trip, loopback included, takes under
/// a microsecond: a higher rate could never be offered, only backlogged.
pub const MAX_RATE_PER_CONNECTION: f64 = 1e6;

/// The highest open-loop rate per generator thread: one request every
/// 100 ns, less than a single `send` system call takes.
pub const MAX_RATE_PER_THREAD: f64 = 1e7;

/// The longest open-loop tick (`--tick`): sends 10 ms early are already ten
/// times wrk2's timer granularity, and a burst that size is a different
/// arrival process, not a cheaper way to offer the same one.
pub const MAX_TICK: Duration = Duration::from_millis(10);

/// The largest request body: 64 MiB. The body is held in memory once and
/// written whole on every request.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// The most requests in flight on one connection (`--pipeline`).
pub use corobench_model::MAX_PIPELINE;

/// The most bytes one pipelined write may carry (`--pipeline` copies of the
/// request, serialised once for the run): 64 MiB, as for a body.
pub const MAX_PIPELINED_BYTES: usize = MAX_BODY_BYTES;

fn refuse(settings: &[Setting], message: String) -> Result<(), LoadError> {
    Err(LoadError::config(settings, message))
}

/// An open-loop tick (`--tick`): zero up to [`MAX_TICK`].
///
/// # Errors
/// A tick longer than [`MAX_TICK`].
pub fn check_tick(tick: Duration) -> Result<(), LoadError> {
    if tick > MAX_TICK {
        return refuse(
            &[Setting::Tick],
            format!(
                "the tick can be at most {}ms, got {tick:?}: a longer one sends bursts, \
                 not the rate asked for",
                MAX_TICK.as_millis()
            ),
        );
    }
    Ok(())
}

/// How a duration setting is named in a message.
fn duration_name(setting: Setting) -> &'static str {
    match setting {
        Setting::Warmup => "warm-up",
        Setting::Timeout => "timeout",
        _ => "duration",
    }
}

/// A duration that may be zero (a warm-up), up to [`MAX_DURATION`].
///
/// # Errors
/// A duration longer than a day; the message starts with the setting's
/// name, e.g. `warm-up`.
pub fn check_duration(setting: Setting, value: Duration) -> Result<(), LoadError> {
    let what = duration_name(setting);
    if value > MAX_DURATION {
        return refuse(
            &[setting],
            format!(
                "{what} can be at most 24h ({}s), got {}s",
                MAX_DURATION.as_secs(),
                value.as_secs()
            ),
        );
    }
    Ok(())
}

/// A duration that must be longer than zero (a window, a timeout), up to [`MAX_DURATION`].
///
/// # Errors
/// Zero, or longer than a day.
pub fn check_positive_duration(setting: Setting, value: Duration) -> Result<(), LoadError> {
    if value.is_zero() {
        let what = duration_name(setting);
        return refuse(
            &[setting],
            format!("{what} must be longer than 0 (and at most 24h)"),
        );
    }
    check_duration(setting, value)
}

/// A request count (`-n`) in `1..=MAX_REQUESTS`.
///
/// # Errors
/// Zero or more than [`MAX_REQUESTS`].
pub fn check_requests(requests: u64) -> Result<(), LoadError> {
    if requests == 0 || requests > MAX_REQUESTS {
        return refuse(
            &[Setting::Requests],
            format!("request count must be from 1 to 2^53 ({MAX_REQUESTS}), got {requests}"),
        );
    }
    Ok(())
}

/// A thread count (`-t`) in `1..=MAX_THREADS`.
///
/// # Errors
/// Zero or more than [`MAX_THREADS`].
pub fn check_threads(threads: u32) -> Result<(), LoadError> {
    if threads == 0 || threads > MAX_THREADS {
        return refuse(
            &[Setting::Threads],
            format!("threads must be from 1 to {MAX_THREADS}, got {threads}"),
        );
    }
    Ok(())
}

/// The highest rate `connections` connections over `threads` threads may be asked for.
#[must_use]
pub fn max_rate_per_s(connections: u32, threads: u32) -> f64 {
    (MAX_RATE_PER_CONNECTION * f64::from(connections)).min(MAX_RATE_PER_THREAD * f64::from(threads))
}

/// An open-loop rate (`-R`) no generator could exceed with these connections and threads.
///
/// # Errors
/// A rate that is not a finite number in `MIN_RATE_PER_S..=max_rate_per_s(..)`.
pub fn check_rate(rate_per_s: f64, connections: u32, threads: u32) -> Result<(), LoadError> {
    let max = max_rate_per_s(connections, threads);
    if rate_per_s.is_finite() && (MIN_RATE_PER_S..=max).contains(&rate_per_s) {
        return Ok(());
    }
    refuse(
        &[Setting::Rate, Setting::Connections, Setting::Threads],
        format!(
            "rate must be from {MIN_RATE_PER_S} to {max} requests/s with {connections} \
             connection(s) and {threads} thread(s), got {rate_per_s}: no generator sends more \
             than {MAX_RATE_PER_CONNECTION} requests/s on one connection or \
             {MAX_RATE_PER_THREAD} from one thread; add connections and threads for more"
        ),
    )
}

/// A request body of at most [`MAX_BODY_BYTES`].
///
/// # Errors
/// A larger body.
pub fn check_body_len(len: usize) -> Result<(), LoadError> {
    if len > MAX_BODY_BYTES {
        return refuse(
            &[Setting::Body],
            format!(
                "the request body can be at most 64 MiB ({MAX_BODY_BYTES} bytes), got {len} bytes"
            ),
        );
    }
    Ok(())
}

/// How a schedule's connections carry requests: a pipeline depth in
/// `1..=MAX_PIPELINE`, pipelining only on kept-alive connections of a
/// closed loop.
///
/// # Errors
/// A depth out of range, or pipelining with a connection per request or
/// an open loop.
pub fn check_wire_mode(schedule: &Schedule) -> Result<(), LoadError> {
    let depth = schedule.pipeline;
    if depth == 0 || depth > MAX_PIPELINE {
        return refuse(
            &[Setting::Pipeline],
            format!("pipeline depth must be from 1 to {MAX_PIPELINE}, got {depth}"),
        );
    }
    if depth > 1 && !schedule.keepalive {
        return refuse(
            &[Setting::Pipeline, Setting::NoKeepalive],
            "pipelining cannot be combined with a connection per request: pipelined requests \
             share a connection, and a connection per request gives every request its own"
                .into(),
        );
    }
    if depth > 1 && schedule.rate_per_s().is_some() {
        return refuse(
            &[Setting::Pipeline, Setting::Rate],
            "pipelining cannot be combined with an open loop: each arrival would wait behind \
             the requests ahead of it on its connection, so its latency would measure the \
             queue it happened to join; pipeline in a closed loop, or use more connections"
                .into(),
        );
    }
    Ok(())
}

/// Checks that `depth` copies of a `request_len`-byte request fit one buffer.
///
/// # Errors
/// More than [`MAX_PIPELINED_BYTES`] in all.
pub fn check_pipelined_bytes(request_len: usize, depth: u32) -> Result<(), LoadError> {
    let depth = usize::try_from(depth).unwrap_or(usize::MAX);
    match request_len.checked_mul(depth) {
        Some(total) if total <= MAX_PIPELINED_BYTES => Ok(()),
        _ => refuse(
            &[Setting::Pipeline],
            format!(
                "{depth} pipelined requests of {request_len} bytes each exceed the 64 MiB \
                 ({MAX_PIPELINED_BYTES} bytes) a pipelined write may carry; use a smaller depth \
                 or body"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The refusal's message, and the settings it is about.
    fn refusal(result: Result<(), LoadError>) -> (String, Vec<Setting>) {
        match result.expect_err("refused") {
            LoadError::Config { settings, message } => (message, settings),
            other => panic!("not a configuration error: {other}"),
        }
    }

    #[test]
    fn durations_are_bounded_by_a_day() {
        assert!(check_duration(Setting::Warmup, Duration::ZERO).is_ok());
        assert!(check_duration(Setting::Warmup, MAX_DURATION).is_ok());
        let long = Duration::from_secs(1_000_000 * 3600);
        let (text, settings) = refusal(check_duration(Setting::Warmup, long));
        assert!(
            text.starts_with("warm-up") && text.contains("24h"),
            "{text}"
        );
        assert_eq!(settings, [Setting::Warmup]);
        let (text, settings) = refusal(check_positive_duration(Setting::Duration, Duration::ZERO));
        assert!(
            text.starts_with("duration") && text.contains("longer than 0"),
            "{text}"
        );
        assert_eq!(settings, [Setting::Duration]);
        assert!(check_positive_duration(Setting::Duration, Duration::MAX).is_err());
    }

    #[test]
    fn counts_name_their_setting_and_range() {
        assert!(check_requests(1).is_ok() && check_requests(MAX_REQUESTS).is_ok());
        for n in [0, MAX_REQUESTS + 1, u64::MAX] {
            let (text, settings) = refusal(check_requests(n));
            assert!(
                text.contains("request count") && text.contains("2^53"),
                "{text}"
            );
            assert_eq!(settings, [Setting::Requests]);
        }
        assert!(check_threads(1).is_ok() && check_threads(MAX_THREADS).is_ok());
        let (text, settings) = refusal(check_threads(MAX_THREADS + 1));
        assert!(text.contains("threads") && text.contains("1024"), "{text}");
        assert_eq!(settings, [Setting::Threads]);
    }

    #[test]
    fn rates_no_generator_can_send_are_refused() {
        assert!(check_rate(20_000.0, 50, 1).is_ok());
        assert!(check_rate(MIN_RATE_PER_S, 1, 1).is_ok());
        assert_eq!(max_rate_per_s(1, 1), MAX_RATE_PER_CONNECTION);
        assert_eq!(max_rate_per_s(1000, 2), 2.0 * MAX_RATE_PER_THREAD);
        for rate in [1e12, 1e8, 1e-9, 0.0, -1.0, f64::NAN, f64::INFINITY] {
            let (text, settings) = refusal(check_rate(rate, 1, 1));
            assert!(
                text.starts_with("rate") && text.contains("1000000"),
                "{rate}: {text}"
            );
            assert_eq!(settings[0], Setting::Rate);
        }
    }

    #[test]
    fn pipelining_needs_a_closed_loop_of_kept_alive_connections() {
        let closed = Schedule::closed(4);
        assert!(check_wire_mode(&closed.with_pipeline(16)).is_ok());
        assert!(check_wire_mode(&closed.with_keepalive(false)).is_ok());
        for (schedule, expected, settings) in [
            (
                closed.with_pipeline(0),
                "pipeline depth must be from 1 to 1024",
                &[Setting::Pipeline][..],
            ),
            (
                closed.with_pipeline(MAX_PIPELINE + 1),
                "got 1025",
                &[Setting::Pipeline],
            ),
            (
                closed.with_pipeline(2).with_keepalive(false),
                "pipelining cannot be combined with a connection per request",
                &[Setting::Pipeline, Setting::NoKeepalive],
            ),
            (
                Schedule::open(100.0, 4).with_pipeline(2),
                "pipelining cannot be combined with an open loop",
                &[Setting::Pipeline, Setting::Rate],
            ),
        ] {
            let (text, about) = refusal(check_wire_mode(&schedule));
            assert!(text.contains(expected), "{schedule:?}: {text}");
            assert_eq!(about, settings);
        }
        assert!(check_pipelined_bytes(100, 16).is_ok());
        let (text, settings) = refusal(check_pipelined_bytes(MAX_BODY_BYTES, 2));
        assert!(text.contains("pipelined requests"), "{text}");
        assert_eq!(settings, [Setting::Pipeline]);
        assert!(check_pipelined_bytes(usize::MAX, 2).is_err());
    }

    #[test]
    fn bodies_are_bounded() {
        assert!(check_body_len(MAX_BODY_BYTES).is_ok());
        let (text, settings) = refusal(check_body_len(MAX_BODY_BYTES + 1));
        assert!(
            text.contains("request body") && text.contains("64 MiB"),
            "{text}"
        );
        assert_eq!(settings, [Setting::Body]);
    }
}
