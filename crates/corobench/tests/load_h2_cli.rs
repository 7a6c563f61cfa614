//! `corobench load --h2/--h2c -m N`: the HTTP/2 line and JSON block, and a
//! protocol asked for and not spoken refused before any load, with the reason.

mod lab;

use corobench_testkit::{ContractConfig, ContractServer, H2Knobs, Knobs, TestServer, TlsKnobs};
use lab::{assert_refused, corobench, load_report_schema_errors, stderr, usage_error};

fn h2_server(h2: H2Knobs, tls: bool) -> TestServer {
    TestServer::start(Knobs {
        http2: Some(h2),
        tls: tls.then(|| TlsKnobs {
            alpn: vec!["h2".to_owned()],
            ..TlsKnobs::default()
        }),
        ..Knobs::default()
    })
}

#[test]
fn h2c_and_h2_are_loaded_with_streams_and_reported() {
    for tls in [false, true] {
        let server = h2_server(H2Knobs::default(), tls);
        let url = server.url("/plaintext");
        // No warm-up: the server's count is then exactly the window's.
        let mut args = vec![
            "load", "--json", "-c", "2", "-m", "4", "-n", "100", "--warmup", "0s",
        ];
        args.push(if tls { "--h2" } else { "--h2c" });
        if tls {
            args.push("--insecure");
        }
        args.push(&url);
        let output = corobench(&args);
        assert!(output.status.success(), "tls {tls}: {}", stderr(&output));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let errors = load_report_schema_errors(&report);
        assert!(errors.is_empty(), "tls {tls}: {errors:#?}");
        assert_eq!(report["requests"], 100, "tls {tls}");
        let http2 = &report["http2"];
        assert_eq!(http2["protocol"], if tls { "h2" } else { "h2c" });
        assert_eq!(http2["streams_per_connection"], 4);
        assert_eq!(http2["streams_effective"], 4);
        assert_eq!(server.counters().requests_received, 100, "tls {tls}");
    }
}

#[test]
fn the_summary_has_an_http2_line_with_the_server_limit() {
    let server = h2_server(
        H2Knobs {
            max_concurrent_streams: Some(1),
            ..H2Knobs::default()
        },
        false,
    );
    let url = server.url("/");
    let output = corobench(&["load", "--h2c", "-c", "1", "-m", "8", "-n", "20", &url]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    for needle in [
        "HTTP/2      h2c",
        "8 asked, 1 effective (server limit 1)",
        "max 1 per connection",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn a_protocol_not_spoken_is_exit_3_with_the_reason() {
    let http1 = ContractServer::start(ContractConfig::default()).unwrap();
    let url = format!("http://{}/plaintext", http1.addr());
    let output = corobench(&["load", "--h2c", "-n", "1", &url]);
    assert_refused(&output, 3, "this server speaks HTTP/1.1, not h2c");
    assert!(output.stdout.is_empty(), "nothing is measured");

    let http1_over_tls = TestServer::start(Knobs {
        tls: Some(TlsKnobs {
            alpn: vec!["http/1.1".to_owned()],
            ..TlsKnobs::default()
        }),
        ..Knobs::default()
    });
    let url = http1_over_tls.url("/");
    let output = corobench(&["load", "--h2", "--insecure", "-n", "1", &url]);
    assert_refused(&output, 3, "does not serve HTTP/2");
    assert_eq!(http1_over_tls.counters().requests_received, 0);
}

#[test]
fn http2_flags_that_do_not_fit_are_usage_errors() {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/");
    for (args, says) in [
        (vec!["--h2"], "https://"),
        (vec!["-m", "4"], "--h2c"),
        (vec!["--h2c", "-m", "0"], "streams"),
        (vec!["--h2c", "-m", "GET"], "-X/--method"),
        (vec!["--h2c", "--pipeline", "4"], "-m"),
        (vec!["--background", "/io?ms=200"], "--h2c"),
        (vec!["--h2c", "--background", "io"], "--background"),
        (
            vec!["--h2c", "--no-keepalive", "--background", "/io"],
            "kept alive",
        ),
        (vec!["--h2c", "--background-streams", "2"], "--background"),
    ] {
        let mut full = vec!["load", "-n", "1"];
        full.extend(args.iter().copied());
        full.push(&url);
        let message = usage_error(&corobench(&full));
        assert!(
            message.contains(says),
            "{args:?}: {says:?} missing in {message}"
        );
    }
    assert_eq!(server.counters().requests_received, 0);
}

#[test]
fn a_background_request_is_reported_apart_and_in_the_schema() {
    let server = ContractServer::start(ContractConfig {
        http2: true,
        ..ContractConfig::default()
    })
    .unwrap();
    let url = format!("http://{}/plaintext", server.addr());
    let args = [
        "load",
        "--json",
        "--h2c",
        "-c",
        "1",
        "-m",
        "4",
        "-d",
        "1s",
        "--warmup",
        "0s",
        "--background",
        "/io?ms=50",
        &url,
    ];
    let output = corobench(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let errors = load_report_schema_errors(&report);
    assert!(errors.is_empty(), "{errors:#?}");
    let background = &report["http2"]["background"];
    assert_eq!(background["path"], "/io?ms=50");
    assert_eq!(background["streams_per_connection"], 1);
    assert_eq!(background["errors"], 0);
    assert!(
        background["responses"].as_u64().unwrap() >= 1,
        "{background}"
    );
    let plain: Vec<&str> = args.iter().copied().filter(|a| *a != "--json").collect();
    let output = corobench(&plain);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(
            "Background  1 stream per connection of GET /io?ms=50 beside the measured ones"
        ),
        "{text}"
    );
}
