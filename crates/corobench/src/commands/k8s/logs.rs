//! Reading what the pods printed. A container's log interleaves its stdout
//! and stderr, and `kubectl logs` cannot split them, so the report is found
//! by its shape: `corobench load --json` prints one pretty JSON object whose
//! first line is a lone `{`, which no progress or warning line on stderr is,
//! and writes it after the run, when nothing else writes any more.

use serde_json::Value;

use crate::remote::protocol::ServeEvent;

/// The load report in one generator's log, as JSON text.
///
/// # Errors
/// The log holds no complete JSON object starting on a line of its own;
/// the message quotes the log's last lines, which say why the generator
/// failed.
pub fn report_in_log(log: &str) -> Result<String, String> {
    let mut offset = 0;
    for line in log.split_inclusive('\n') {
        if line.trim_end() == "{" {
            let mut values =
                serde_json::Deserializer::from_str(&log[offset..]).into_iter::<Value>();
            if let Some(Ok(value)) = values.next() {
                return Ok(value.to_string());
            }
        }
        offset += line.len();
    }
    Err(format!(
        "no JSON report in its log; the log ends with:\n{}",
        tail(log, 12)
    ))
}

/// Whether `corobench serve`'s log announces the target as ready (built,
/// healthy and verified); its lines are JSON objects with an `event`.
#[must_use]
pub fn serve_is_ready(log: &str) -> bool {
    log.lines()
        .any(|line| matches!(ServeEvent::parse(line), Some(ServeEvent::Ready(_))))
}

/// The last `lines` lines of a log, indented, for an error message.
#[must_use]
pub fn tail(log: &str, lines: usize) -> String {
    let all: Vec<&str> = log.lines().collect();
    let start = all.len().saturating_sub(lines);
    if all.is_empty() {
        return "  (the log is empty)".to_string();
    }
    all[start..]
        .iter()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_is_found_between_stderr_lines() {
        let log = "waiting 3.0s: the warm-up begins 2.0s before …\n{\n  \"a\": {\n    \"b\": 1\n  }\n}\nerror: none succeeded\n";
        assert_eq!(report_in_log(log).unwrap(), r#"{"a":{"b":1}}"#);
    }

    #[test]
    fn a_log_without_a_report_says_how_it_ends() {
        let error =
            report_in_log("note: using epoll\nerror: cannot connect to http://x\n").unwrap_err();
        assert!(error.ends_with("  note: using epoll\n  error: cannot connect to http://x"));
        let truncated = report_in_log("{\n  \"a\": 1\n").unwrap_err();
        assert!(truncated.contains("no JSON report"), "{truncated}");
    }

    #[test]
    fn serve_is_ready_once_it_says_so() {
        assert!(!serve_is_ready("building go-nethttp\n"));
        let ready =
            crate::remote::protocol::ServeEvent::Ready(Box::new(crate::remote::protocol::Ready {
                target: "go-nethttp".into(),
                url: "http://127.0.0.1:8080".into(),
                addr: "127.0.0.1:8080".into(),
                port: 8080,
                listen: "127.0.0.1".into(),
                pid: 7,
                pgid: 7,
                model: "goroutine-per-connection".into(),
                source_hash: "h".into(),
                tool_versions: std::collections::BTreeMap::new(),
                parameters: std::collections::BTreeMap::new(),
                cpus: None,
                verified: true,
                corobench_version: "0".into(),
                unix_ms: 1,
            }));
        assert!(serve_is_ready(&format!("building\n{}\n", ready.line())));
        // Half a ready line is not one.
        assert!(!serve_is_ready(
            "{\"event\":\"ready\",\"url\":\"http://127.0.0.1:8080\"}\n"
        ));
    }
}
