//! The TLS and HTTP/2 rules, and every other rule over TLS and over HTTP/2,
//! against the test kit's contract server behind in-test fronts; and the
//! broken cases: a wrong certificate, ALPN that does not agree, cleartext
//! served on the TLS port, a server that serialises its streams.

mod common;

use std::sync::Arc;

use common::{Front, Streams, h2_front, tls_front};
use corobench_target::tls::server_config;
use corobench_target::{Protocol, RunCertificates, TlsFiles, ensure_payload};
use corobench_testkit::{ContractConfig, ContractServer};
use corobench_verify::{RuleResult, VerifyConfig, rules_for, verify};

const NAME: &str = "kit";
const MODEL: &str = "worker-pool";

/// The kit's contract server in cleartext, its scratch folder and the
/// run's certificates.
struct Setup {
    _dir: tempfile::TempDir,
    server: ContractServer,
    certificates: RunCertificates,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    ensure_payload(dir.path()).unwrap();
    let config = ContractConfig {
        target_name: NAME.to_owned(),
        model: MODEL.to_owned(),
        data_dir: Some(dir.path().to_owned()),
        upload_dir: Some(dir.path().to_owned()),
        world: None,
        faults: Default::default(),
        max_rate: None,
        burst_s: 0.02,
        alloc_per_conn: 0,
        ..ContractConfig::default()
    };
    let server = ContractServer::start(config).unwrap();
    let certificates = RunCertificates::create(&dir.path().join("tls"), &[]).unwrap();
    Setup {
        _dir: dir,
        server,
        certificates,
    }
}

fn serving(files: &TlsFiles, alpn: &[&[u8]]) -> Arc<rustls::ServerConfig> {
    server_config(files, alpn).unwrap()
}

fn check(front: &Front, protocol: Protocol, files: &TlsFiles) -> Vec<RuleResult> {
    let mut config = VerifyConfig::new(front.addr, NAME, MODEL);
    config.protocol = protocol;
    config.tls = Some(files);
    verify(&config)
}

fn failed(results: &[RuleResult]) -> Vec<&'static str> {
    results
        .iter()
        .filter(|r| r.is_fail())
        .map(|r| r.rule)
        .collect()
}

fn message<'a>(results: &'a [RuleResult], rule: &str) -> &'a str {
    results
        .iter()
        .find(|r| r.rule == rule)
        .and_then(RuleResult::message)
        .unwrap_or_default()
}

fn assert_all_pass(results: &[RuleResult], protocol: Protocol) {
    let rules: Vec<&str> = results.iter().map(|r| r.rule).collect();
    assert_eq!(rules, rules_for(protocol));
    let not_passed: Vec<&RuleResult> = results.iter().filter(|r| !r.is_pass()).collect();
    assert!(not_passed.is_empty(), "{protocol}: {not_passed:#?}");
}

#[test]
fn every_rule_passes_over_tls() {
    let setup = setup();
    let files = setup.certificates.files();
    let front = tls_front(setup.server.addr(), serving(files, &[b"http/1.1"]));
    let results = check(&front, Protocol::TLS, files);
    assert_all_pass(&results, Protocol::TLS);
    assert!(rules_for(Protocol::TLS).contains(&"pipelining"));
}

#[test]
fn every_rule_but_http1_connection_handling_passes_over_h2_and_h2c() {
    let setup = setup();
    let files = setup.certificates.files();
    let tls = serving(files, &[b"h2", b"http/1.1"]);
    let h2 = h2_front(setup.server.addr(), Some(tls), Streams::Concurrent);
    assert_all_pass(&check(&h2, Protocol::H2, files), Protocol::H2);
    let h2c = h2_front(setup.server.addr(), None, Streams::Concurrent);
    assert_all_pass(&check(&h2c, Protocol::H2C, files), Protocol::H2C);
    for rule in ["keep-alive", "pipelining", "tls-alpn"] {
        assert!(!rules_for(Protocol::H2C).contains(&rule), "{rule}");
    }
}

#[test]
fn a_certificate_from_another_authority_fails_tls_certificate() {
    let setup = setup();
    let other = RunCertificates::create(&setup._dir.path().join("other"), &[]).unwrap();
    let front = tls_front(setup.server.addr(), serving(other.files(), &[b"http/1.1"]));
    let results = check(&front, Protocol::TLS, setup.certificates.files());
    assert!(
        failed(&results).contains(&"tls-certificate"),
        "{results:#?}"
    );
    let text = message(&results, "tls-certificate");
    assert!(text.contains("TLS handshake"), "{text}");
    assert!(text.contains("TLS_CERT"), "{text}");
}

#[test]
fn a_server_without_alpn_fails_tls_alpn() {
    let setup = setup();
    let files = setup.certificates.files();
    let front = tls_front(setup.server.addr(), serving(files, &[]));
    let results = check(&front, Protocol::TLS, files);
    assert_eq!(failed(&results), ["tls-alpn"], "{results:#?}");
    let text = message(&results, "tls-alpn");
    assert!(text.contains("agreed on none; expected http/1.1"), "{text}");
}

#[test]
fn a_server_that_picks_http1_when_h2_is_offered_fails_over_h2() {
    let setup = setup();
    let files = setup.certificates.files();
    let front = tls_front(setup.server.addr(), serving(files, &[b"http/1.1"]));
    let results = check(&front, Protocol::H2, files);
    assert!(failed(&results).contains(&"tls-alpn"), "{results:#?}");
    let text = message(&results, "h2-hpack");
    assert!(text.contains("not h2"), "never a silent fallback: {text}");
}

#[test]
fn a_port_that_answers_cleartext_fails_tls_refuses_cleartext() {
    let setup = setup();
    let plain = Front {
        addr: setup.server.addr(),
    };
    let results = check(&plain, Protocol::TLS, setup.certificates.files());
    assert!(
        failed(&results).contains(&"tls-refuses-cleartext"),
        "{results:#?}"
    );
    let text = message(&results, "tls-refuses-cleartext");
    assert!(text.contains("answered 200 in cleartext"), "{text}");
}

#[test]
fn a_server_that_serialises_streams_fails_h2_concurrent_streams() {
    let setup = setup();
    let files = setup.certificates.files();
    let front = h2_front(setup.server.addr(), None, Streams::OneAtATime);
    let results = check(&front, Protocol::H2C, files);
    assert_eq!(failed(&results), ["h2-concurrent-streams"], "{results:#?}");
    let text = message(&results, "h2-concurrent-streams");
    assert!(
        text.contains("holds streams of one connection up"),
        "{text}"
    );
}

#[test]
fn h2c_to_an_http1_only_server_fails_the_preface() {
    let setup = setup();
    let plain = Front {
        addr: setup.server.addr(),
    };
    let mut config = VerifyConfig::new(plain.addr, NAME, MODEL);
    config.protocol = Protocol::H2C;
    config.timeout = std::time::Duration::from_secs(2);
    let results = verify(&config);
    assert!(results.iter().all(|r| !r.is_pass()), "{results:#?}");
    assert!(
        message(&results, "h2-settings").contains("SETTINGS"),
        "{results:#?}"
    );
}

#[test]
fn tls_without_certificates_fails_every_rule_saying_why() {
    let setup = setup();
    let mut config = VerifyConfig::new(setup.server.addr(), NAME, MODEL);
    config.protocol = Protocol::TLS;
    let results = verify(&config);
    assert_eq!(results.len(), rules_for(Protocol::TLS).len());
    for result in &results {
        assert!(
            result
                .message()
                .unwrap()
                .contains("no certificates were given"),
            "{result:?}"
        );
    }
}
