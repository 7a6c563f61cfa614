//! OS threads of this process, from `/proc/self/status`.

/// The `Threads:` count of this process, or `None` off Linux.
pub fn thread_count() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_threads(&status)
}

fn parse_threads(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|value| value.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_threads_line() {
        let status = "Name:\tserver\nState:\tS (sleeping)\nThreads:\t7\nSigQ:\t0/9\n";
        assert_eq!(parse_threads(status), Some(7));
        assert_eq!(parse_threads("Name:\tx\n"), None);
        assert_eq!(parse_threads("Threads:\tmany\n"), None);
    }

    #[test]
    fn this_test_process_has_at_least_one_thread() {
        assert!(thread_count().is_some_and(|n| n >= 1));
    }
}
