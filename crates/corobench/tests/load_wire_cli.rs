//! `corobench load --no-keepalive` and `--pipeline`: what they print, and
//! the combinations refused with exit status 2 and the flag named.

mod lab;

use corobench_testkit::{Knobs, TestServer};
use lab::{corobench, load_report_schema_errors, stderr};

fn load_json(args: &[&str], url: &str) -> serde_json::Value {
    let mut full = vec!["load", "--json"];
    full.extend_from_slice(args);
    full.push(url);
    let output = corobench(&full);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn the_json_report_says_how_connections_carried_requests() {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/plaintext");

    // With the default warm-up: connections opened for warm-up requests
    // are not counted with the window's.
    let short = load_json(&["-c", "4", "-n", "100", "--no-keepalive"], &url);
    assert_eq!(short["keepalive"], false);
    assert_eq!(short["connect_latency"]["count"], 100);
    let before = server.counters().requests_received;
    let pipelined = load_json(
        &["-c", "2", "-n", "320", "--pipeline", "16", "--warmup", "0s"],
        &url,
    );
    assert_eq!(pipelined["pipeline"], 16);
    assert!(pipelined.get("connect_latency").is_none());
    let plain = load_json(&["-c", "2", "-n", "10", "--warmup", "0s"], &url);
    for absent in ["keepalive", "pipeline", "connect_latency"] {
        assert!(plain.get(absent).is_none(), "{absent} in a plain run");
    }
    for report in [&short, &pipelined, &plain] {
        let errors = load_report_schema_errors(report);
        assert!(errors.is_empty(), "{errors:#?}");
    }
    assert_eq!(server.counters().requests_received - before, 330);
}

#[test]
fn the_summary_shows_connect_times_and_the_pipeline() {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/");
    let output = corobench(&["load", "-n", "50", "-c", "2", "--no-keepalive", &url]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    for needle in [
        "a new connection per request",
        "Connect",
        "includes its connect",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    let output = corobench(&["load", "-n", "64", "-c", "2", "--pipeline", "8", &url]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("8 pipelined per connection"), "{text}");
}

#[test]
fn pipelining_combinations_that_make_no_sense_are_refused() {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/");
    let cases: [(&[&str], &[&str]); 5] = [
        (&["--pipeline", "0"], &["--pipeline", "from 1 to 1024"]),
        (&["--pipeline", "1025"], &["--pipeline", "from 1 to 1024"]),
        (&["--pipeline", "lots"], &["--pipeline", "whole number"]),
        (
            &["--pipeline", "16", "--no-keepalive"],
            &["--pipeline", "--no-keepalive"],
        ),
        (
            &["--pipeline", "4", "-R", "1000"],
            &["open loop", "(--pipeline, -R)"],
        ),
    ];
    for (args, expected) in cases {
        let mut full = vec!["load", "-n", "10"];
        full.extend_from_slice(args);
        full.push(&url);
        let output = corobench(&full);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        for needle in expected {
            assert!(
                err.contains(needle),
                "{args:?}: {needle:?} missing in {err}"
            );
        }
    }
    assert_eq!(server.counters().requests_received, 0, "nothing was sent");
}
