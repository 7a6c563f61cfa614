//! The verifier against servers that are not HTTP servers at all: every
//! rule fails (or is not checkable) with a message, and nothing hangs.

use std::net::TcpListener;
use std::time::Duration;

use corobench_testkit::{Knobs, TestServer};
use corobench_verify::{RULES, RuleResult, VerifyConfig, verify};

fn verify_knobs(knobs: Knobs) -> Vec<RuleResult> {
    let server = TestServer::start(knobs);
    let mut config = VerifyConfig::new(server.addr(), "kit", "worker-pool");
    config.timeout = Duration::from_secs(2);
    verify(&config)
}

fn assert_nothing_passes(results: &[RuleResult], expected_in_every_failure: &str) {
    assert_eq!(results.len(), RULES.len());
    for result in results {
        assert!(!result.is_pass(), "{result:?}");
        let message = result.message().unwrap();
        assert!(
            message.starts_with(&format!("{}: ", result.rule)),
            "{message}"
        );
        if result.is_fail() {
            assert!(message.contains(expected_in_every_failure), "{message}");
        }
    }
}

#[test]
fn garbage_is_reported_as_malformed() {
    let results = verify_knobs(Knobs {
        garbage: true,
        ..Knobs::default()
    });
    assert_nothing_passes(&results, "malformed response");
}

#[test]
fn truncated_bodies_are_reported_as_closed_early() {
    let results = verify_knobs(Knobs {
        truncate: true,
        ..Knobs::default()
    });
    assert_nothing_passes(
        &results,
        "the connection closed after 13 of the 113 body bytes",
    );
}

#[test]
fn a_server_that_hangs_up_at_once_is_reported() {
    let results = verify_knobs(Knobs {
        close_on_accept: true,
        ..Knobs::default()
    });
    assert_nothing_passes(&results, "");
}

#[test]
fn a_port_nobody_listens_on_is_reported_as_unreachable() {
    let addr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let results = verify(&VerifyConfig::new(addr, "kit", "worker-pool"));
    assert_nothing_passes(&results, "cannot connect to");
}

/// Issue "wrong successes", item 12: Ctrl-C during a verification waited
/// for every rule (11 s with php-fpm). A cancelled verification reports
/// the rules it did not check as interrupted instead of checking them.
#[test]
fn a_cancelled_verification_checks_no_further_rule() {
    let server = TestServer::start(Knobs::default());
    let cancel = std::sync::atomic::AtomicBool::new(true);
    let mut config = VerifyConfig::new(server.addr(), "kit", "worker-pool");
    config.cancel = Some(&cancel);
    let results = verify(&config);
    assert_eq!(results.len(), RULES.len());
    let interrupted: Vec<&str> = results
        .iter()
        .filter(|r| {
            r.message()
                .is_some_and(|m| m.contains("verification was interrupted"))
        })
        .map(|r| r.rule)
        .collect();
    let mut expected: Vec<&str> = RULES
        .iter()
        .copied()
        .filter(|r| !["date-not-cached", "db"].contains(r))
        .collect();
    expected.sort_unstable();
    let mut interrupted = interrupted;
    interrupted.sort_unstable();
    assert_eq!(interrupted, expected);
}
