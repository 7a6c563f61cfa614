//! `corobench load https://…`: what it prints, and every TLS mistake
//! refused before the load with the reason and the flag that changes it.

mod lab;

use corobench_testkit::{CertKind, Knobs, TestServer, TlsKnobs};
use lab::{assert_refused, corobench, load_report_schema_errors, stderr};

fn https(tls: TlsKnobs) -> TestServer {
    TestServer::start(Knobs {
        tls: Some(tls),
        ..Knobs::default()
    })
}

fn ca_of(server: &TestServer) -> String {
    server.ca_file().unwrap().display().to_string()
}

#[test]
fn an_https_url_is_loaded_and_its_handshakes_reported() {
    let server = https(TlsKnobs::default());
    let (url, ca) = (server.url("/plaintext"), ca_of(&server));
    let output = corobench(&[
        "load",
        "--json",
        "-c",
        "2",
        "-n",
        "40",
        "--no-keepalive",
        "--ca",
        &ca,
        &url,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let errors = load_report_schema_errors(&report);
    assert!(errors.is_empty(), "{errors:#?}");
    let tls = &report["tls"];
    assert_eq!(tls["version"], "TLSv1.3");
    assert_eq!(tls["verified"], true);
    assert_eq!(tls["resumption"], true);
    let handshakes =
        tls["full_handshakes"].as_u64().unwrap() + tls["resumed_handshakes"].as_u64().unwrap();
    assert_eq!(handshakes, 40);
    assert_eq!(tls["handshake"]["count"], 40);
    assert_eq!(report["connect_latency"]["count"], 40);

    let output = corobench(&[
        "load",
        "-c",
        "2",
        "-n",
        "40",
        "--insecure",
        "--no-tls-resume",
        &url,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    for needle in [
        "TLS         TLSv1.3",
        "certificate not checked",
        "resumption off",
        "Handshakes  2 full, 0 resumed",
        "handshake p50",
        "connect p50",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn a_certificate_the_check_refuses_is_exit_3_naming_the_flags() {
    for (certificate, says, flag) in [
        (CertKind::Valid, "not signed by a trusted CA", "--ca FILE"),
        (CertKind::Expired, "has expired", "--insecure"),
        (
            CertKind::WrongName,
            "not valid for \"127.0.0.1\"",
            "--sni NAME",
        ),
    ] {
        let server = https(TlsKnobs {
            certificate,
            ..TlsKnobs::default()
        });
        let mut args = vec!["load".to_owned(), "-n".into(), "10".into()];
        if certificate != CertKind::Valid {
            args.extend(["--ca".into(), ca_of(&server)]);
        }
        args.push(server.url("/"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = corobench(&args);
        assert_refused(&output, 3, says);
        assert_refused(&output, 3, flag);
        assert_eq!(server.counters().requests_received, 0, "{certificate:?}");
    }
}

#[test]
fn a_protocol_mismatch_is_named_from_the_first_bytes() {
    let plaintext = https(TlsKnobs {
        plaintext_answer: true,
        ..TlsKnobs::default()
    });
    let output = corobench(&["load", "-n", "10", &plaintext.url("/")]);
    assert_refused(&output, 3, "this port speaks plaintext HTTP");

    let tls = https(TlsKnobs::default());
    let url = format!("http://{}/", tls.addr());
    let output = corobench(&["load", "-n", "10", "-c", "1", &url]);
    assert_refused(&output, 1, "this port speaks TLS");
}

#[test]
fn tls_settings_that_cannot_work_are_exit_2() {
    let server = https(TlsKnobs::default());
    let url = server.url("/");
    let not_pem = std::env::current_exe().unwrap().display().to_string();
    for (args, says) in [
        (vec!["--tls-version", "1.1"], "unknown TLS version"),
        (vec!["--tls-ciphers", "RC4_MD5"], "unknown cipher suite"),
        (
            vec!["--ca", "/nonexistent/ca.pem"],
            "cannot read the CA file",
        ),
        (vec!["--ca", not_pem.as_str()], "holds no PEM certificate"),
        (vec!["--tls-provider", "openssl"], "unknown crypto provider"),
    ] {
        let mut full = vec!["load", "-n", "10"];
        full.extend_from_slice(&args);
        full.push(&url);
        assert_refused(&corobench(&full), 2, says);
    }
    let plain = TestServer::start(Knobs::default());
    let output = corobench(&["load", "-n", "10", "--insecure", &plain.url("/")]);
    assert_refused(&output, 2, "are for https:// URLs");
    assert_eq!(plain.counters().requests_received, 0);
}

#[test]
fn kernel_tls_runs_or_fails_the_option_with_the_reason() {
    let server = https(TlsKnobs::default());
    let ca = ca_of(&server);
    let output = corobench(&[
        "load",
        "--json",
        "-n",
        "20",
        "--ktls",
        "--backend",
        "epoll",
        "--ca",
        &ca,
        &server.url("/"),
    ]);
    if output.status.success() {
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["tls"]["ktls"], true);
    } else {
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("modprobe tls"),
            "{}",
            stderr(&output)
        );
    }
}
