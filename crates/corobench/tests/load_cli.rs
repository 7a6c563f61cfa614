//! `corobench load` as a user runs it: the binary, its output, its exit codes.

mod lab;

use corobench_testkit::{Knobs, TestServer};
use lab::{Lab, corobench, load_report_schema_errors, stderr};

#[test]
fn json_output_validates_against_the_schema() {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/plaintext");
    for extra in [
        &["-n", "200"][..],
        &["-n", "200", "-R", "2000", "--backend", "io_uring"][..],
    ] {
        let mut args = vec!["load", "--json", "-c", "4"];
        args.extend_from_slice(extra);
        args.push(&url);
        let output = corobench(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let errors = load_report_schema_errors(&report);
        assert!(errors.is_empty(), "{extra:?}: {errors:#?}");
        assert_eq!(report["requests"], 200);
    }
}

#[test]
fn json_output_carries_the_generator_s_counters_or_says_why_not() {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/plaintext");
    let args = ["load", "--json", "--probe", "-c", "2", "-d", "300ms", &url];
    let output = corobench(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let errors = load_report_schema_errors(&report);
    assert!(errors.is_empty(), "{errors:#?}");
    let probe = report["probe_mb_per_s"].as_f64();
    assert!(probe.is_some_and(|mb| mb > 0.0), "--probe: {report}");
    let counters = &report["counters"];
    assert_eq!(counters["counts"]["threads"], 1, "{counters}");
    for kind in ["syscalls", "ctx_switches", "minor_faults"] {
        let missing = counters["missing"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["counter"] == kind && m["side"] == "generator");
        assert_ne!(
            counters["counts"][kind].is_u64(),
            missing,
            "{kind}: {counters}"
        );
    }
    // Counted over the window, where responses came back (io_uring may
    // batch several into one system call, so no ratio is asserted).
    if let Some(syscalls) = counters["counts"]["syscalls"].as_u64() {
        let responses = counters["responses"].as_u64().unwrap();
        assert!(responses > 0 && syscalls > 0, "{counters}");
    }
    // Refused, the counter is missing with the reason, and the run goes on.
    let refused = Lab::new()
        .command(&args)
        .env("COROBENCH_REFUSE_COUNTERS", "syscalls")
        .output()
        .unwrap();
    assert!(refused.status.success(), "{}", stderr(&refused));
    let report: serde_json::Value = serde_json::from_slice(&refused.stdout).unwrap();
    let missing = &report["counters"]["missing"][0];
    assert_eq!(missing["counter"], "syscalls", "{report}");
    assert!(
        missing["reason"]
            .as_str()
            .unwrap()
            .contains("COROBENCH_REFUSE_COUNTERS")
    );
    assert!(report["counters"]["counts"]["syscalls"].is_null());
}

#[test]
fn human_output_names_every_section() {
    let server = TestServer::start(Knobs::default());
    let output = corobench(&[
        "load",
        "-n",
        "100",
        "-c",
        "2",
        "--percentiles",
        "50,99.9",
        &server.url("/"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    for needle in [
        "Requests    100 in",
        "Latency",
        "p50",
        "p99.9",
        "Status      2xx 100",
        "Errors      none",
        "Generator",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/");
    let cases: [(&[&str], &str); 10] = [
        (
            &["load", "-c", "0", &url],
            "connections (-c) must be at least 1",
        ),
        (
            &["load", "-t", "3", "-c", "2", &url],
            "3 threads cannot exceed 2 connections: each thread needs a connection (-t, -c)",
        ),
        (&["load", "-R", "0", &url], "is not a rate"),
        (
            &["load", "-d", "0s", &url],
            "duration must be longer than 0",
        ),
        (&["load", "ftp://127.0.0.1/"], "must start with http://"),
        (&["load", "--cpus", "99", &url], "--cpus"),
        (
            &["load", "--frobnicate", &url],
            "unexpected argument '--frobnicate'",
        ),
        (&["load", "-H", "no colon", &url], "is not a header"),
        (
            &["load", "-R", "100", "--tick", "20ms", &url],
            "the tick can be at most 10ms",
        ),
        (&["load", "--tick", "1ms", &url], "--rate"),
    ];
    for (args, expected) in cases {
        let output = corobench(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(expected),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn an_unreachable_server_is_exit_3() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let output = corobench(&["load", "-d", "1s", &format!("http://127.0.0.1:{port}/")]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot connect to 127.0.0.1"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_run_where_nothing_succeeded_is_exit_1_with_the_reason() {
    let server = TestServer::start(Knobs {
        status: 503,
        ..Knobs::default()
    });
    let output = corobench(&["load", "-n", "50", "-c", "2", &server.url("/")]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("no request succeeded"),
        "{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("50 status_5xx"),
        "{}",
        stderr(&output)
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("5xx 50"),
        "the measured figures are still shown"
    );
}

#[test]
fn a_load_warms_up_for_a_second_unless_told_otherwise() {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/");
    // The same warm-up as a spec's and `bench`'s, open loop or closed.
    let cases: [(&[&str], f64); 3] = [
        (&["-R", "1000"], 1.0),
        (&[], 1.0),
        (&["-R", "1000", "--warmup", "0s"], 0.0),
    ];
    for (extra, warmup_s) in cases {
        let mut args = vec!["load", "--json", "-c", "2", "-n", "20"];
        args.extend_from_slice(extra);
        args.push(&url);
        let output = corobench(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["warmup_s"], warmup_s, "{extra:?}");
    }
}

#[test]
fn an_open_loop_says_when_its_schedule_began() {
    let server = TestServer::start(Knobs::default());
    let output = corobench(&["load", "-n", "20", "-c", "2", "-R", "500", &server.url("/")]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("once every connection was ready"),
        "no start in:\n{text}"
    );
}

#[test]
fn an_open_loop_says_its_tick() {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/");
    let json = |extra: &[&str]| {
        let mut args = vec!["load", "-n", "20", "-c", "2", "-R", "500", "--json", &url];
        args.extend_from_slice(extra);
        let output = corobench(&args);
        assert!(output.status.success(), "{extra:?}: {}", stderr(&output));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let errors = load_report_schema_errors(&report);
        assert!(errors.is_empty(), "{extra:?}: {errors:#?}");
        report["open_loop"]["tick_us"].as_u64()
    };
    assert_eq!(json(&[]), Some(50), "the default tick");
    assert_eq!(json(&["--tick", "0s"]), Some(0));
    assert_eq!(json(&["--tick", "2ms"]), Some(2000));
    let text = corobench(&["load", "-n", "20", "-c", "2", "-R", "500", &url]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("; tick 50"), "no tick in:\n{text}");
}

#[test]
fn a_timed_run_says_what_it_drained() {
    let server = TestServer::start(Knobs::default());
    let output = corobench(&["load", "-d", "300ms", "-c", "2", &server.url("/")]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("  Drain       ") && text.contains("answered after the window closed"),
        "no drain line in:\n{text}"
    );
}

#[test]
fn kernel_send_stamps_are_said_in_the_report_and_need_receive_stamps() {
    let server = TestServer::start(Knobs {
        response_delay: std::time::Duration::from_millis(5),
        ..Knobs::default()
    });
    let url = server.url("/");
    let args = [
        "load",
        "-c",
        "2",
        "-n",
        "50",
        "--backend",
        "epoll",
        "--kernel-stamps",
        "--kernel-send-stamps",
        &url,
    ];
    let output = corobench(&[&args[..], &["--json"]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["kernel_stamps"]["send"], true);
    let errors = load_report_schema_errors(&report);
    assert!(errors.is_empty(), "{errors:#?}");
    let text = String::from_utf8_lossy(&corobench(&args).stdout).into_owned();
    assert!(
        text.contains("requests timed from the kernel's send"),
        "{text}"
    );
    let alone = corobench(&["load", "-n", "1", "--kernel-send-stamps", &url]);
    assert_eq!(alone.status.code(), Some(2), "{}", stderr(&alone));
    assert!(
        stderr(&alone).contains("--kernel-stamps"),
        "{}",
        stderr(&alone)
    );
}

#[test]
fn kernel_stamps_are_said_in_the_report() {
    // Answers 5 ms apart: the kernel switches stamping on a moment after the
    // first socket asks, so the run must outlast that moment.
    let server = TestServer::start(Knobs {
        response_delay: std::time::Duration::from_millis(5),
        ..Knobs::default()
    });
    let url = server.url("/");
    for backend in ["epoll", "io_uring"] {
        let args = [
            "load",
            "-c",
            "2",
            "-n",
            "100",
            "--kernel-stamps",
            "--backend",
            backend,
            &url,
            "--json",
        ];
        let output = corobench(&args);
        assert!(output.status.success(), "{backend}: {}", stderr(&output));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let stamped = report["kernel_stamps"]["stamped"].as_u64();
        assert!(stamped > Some(0), "{backend}: {stamped:?}");
        let errors = load_report_schema_errors(&report);
        assert!(errors.is_empty(), "{backend}: {errors:#?}");
        let human = corobench(&args[..args.len() - 1]);
        let text = String::from_utf8_lossy(&human.stdout);
        assert!(text.contains("stamped by the kernel"), "{backend}: {text}");
    }
}
