//! TLS that cannot work, or a server that breaks it: each stops the run
//! before the load with the reason, or is counted by kind during it.

mod support;

use corobench_load::{
    Backend, HandshakeRefusal, LoadConfig, LoadError, LoadRun, Schedule, TlsError, TlsOptions,
    TlsVersions,
};
use corobench_testkit::{CertKind, ContractConfig, ContractServer, Knobs, TestServer, TlsKnobs};
use support::{BACKENDS, run, schedule_config};

fn https(tls: TlsKnobs) -> TestServer {
    TestServer::start(Knobs {
        tls: Some(tls),
        ..Knobs::default()
    })
}

/// A closed loop of 2 connections to `url`, TLS options edited.
fn load_to(url: &str, edit: impl FnOnce(&mut TlsOptions)) -> LoadConfig {
    let endpoint = corobench_load::Endpoint::from_url(url).unwrap();
    let mut config = LoadConfig::closed(endpoint, 2, std::time::Duration::from_secs(1));
    if let Some(options) = config.endpoint.tls.as_mut() {
        edit(options);
    }
    config
}

/// Why preparing a load against `server` failed.
fn refusal(server: &TestServer, edit: impl FnOnce(&mut TlsOptions)) -> HandshakeRefusal {
    match LoadRun::prepare(load_to(&server.url("/"), edit)) {
        Err(LoadError::Tls(TlsError::Handshake { refusal, .. })) => refusal,
        other => panic!("expected a refused handshake, got {other:?}"),
    }
}

fn trusting(server: &TestServer) -> impl FnOnce(&mut TlsOptions) + '_ {
    |options| options.ca_file = server.ca_file().map(ToOwned::to_owned)
}

#[test]
fn a_certificate_the_check_refuses_stops_the_run_with_the_reason() {
    let self_signed = https(TlsKnobs::default());
    assert_eq!(
        refusal(&self_signed, |_| {}),
        HandshakeRefusal::UntrustedCertificate
    );
    let expired = https(TlsKnobs {
        certificate: CertKind::Expired,
        ..TlsKnobs::default()
    });
    assert_eq!(
        refusal(&expired, trusting(&expired)),
        HandshakeRefusal::Expired
    );
    let wrong_name = https(TlsKnobs {
        certificate: CertKind::WrongName,
        ..TlsKnobs::default()
    });
    assert_eq!(
        refusal(&wrong_name, trusting(&wrong_name)),
        HandshakeRefusal::WrongName {
            name: "127.0.0.1".into()
        }
    );
    let own = https(TlsKnobs {
        certificate: CertKind::SelfSigned,
        ..TlsKnobs::default()
    });
    assert_eq!(
        refusal(&own, trusting(&own)),
        HandshakeRefusal::UntrustedCertificate
    );
    let message = LoadRun::prepare(load_to(&own.url("/"), |_| {}))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains(&own.addr().to_string()) && message.contains("self-signed"),
        "{message}"
    );
    assert_eq!(own.counters().requests_received, 0, "nothing was loaded");
}

#[test]
fn without_the_check_any_certificate_is_accepted() {
    for certificate in [CertKind::Expired, CertKind::WrongName, CertKind::SelfSigned] {
        let server = https(TlsKnobs {
            certificate,
            ..TlsKnobs::default()
        });
        let mut config = load_to(&server.url("/"), |o| o.verify = false);
        config.stop = corobench_load::StopAfter::Requests(20);
        let report = run(config);
        assert_eq!(report.requests, 20, "{certificate:?}");
        assert!(!report.tls.unwrap().verified, "{certificate:?}");
    }
}

#[test]
fn https_to_a_plaintext_port_says_so() {
    let answering = https(TlsKnobs {
        plaintext_answer: true,
        ..TlsKnobs::default()
    });
    assert_eq!(refusal(&answering, |_| {}), HandshakeRefusal::PlaintextHttp);
    let contract = ContractServer::start(ContractConfig::default()).unwrap();
    let url = format!("https://{}/plaintext", contract.addr());
    let message = LoadRun::prepare(load_to(&url, |_| {}))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("this port speaks plaintext HTTP"),
        "{message}"
    );
    // A server that just closes cannot say what it speaks.
    let silent = TestServer::start(Knobs::default());
    let url = format!("https://{}/", silent.addr());
    match LoadRun::prepare(load_to(&url, |_| {})) {
        Err(LoadError::Tls(TlsError::Handshake { refusal, .. })) => {
            assert_eq!(refusal, HandshakeRefusal::Closed);
        }
        other => panic!("expected a refused handshake, got {other:?}"),
    }
}

#[test]
fn http_to_a_tls_port_is_named_from_the_first_bytes() {
    for backend in BACKENDS {
        let server = https(TlsKnobs::default());
        let url = format!("http://{}/", server.addr());
        let mut config = load_to(&url, |_| {});
        config.backend = backend;
        config.stop = corobench_load::StopAfter::Requests(10);
        let report = run(config);
        assert_eq!(report.requests, 0, "{backend:?}");
        assert_eq!(
            report.errors.malformed, 10,
            "{backend:?}: {:?}",
            report.errors
        );
        let warned = report.warnings.iter().any(|w| {
            matches!(
                w,
                corobench_model::LoadWarning::PortSpeaksTls { answers: 10 }
            )
        });
        assert!(warned, "{backend:?}: {:?}", report.warnings);
    }
}

#[test]
fn an_alpn_or_a_version_the_server_refuses_stops_the_run() {
    let h2_only = https(TlsKnobs {
        alpn: vec!["h2".into()],
        ..TlsKnobs::default()
    });
    assert_eq!(
        refusal(&h2_only, trusting(&h2_only)),
        HandshakeRefusal::NoAlpn {
            offered: "http/1.1".into()
        }
    );
    let tls12_only = https(TlsKnobs {
        only_version: Some(12),
        ..TlsKnobs::default()
    });
    let ca = tls12_only.ca_file().map(ToOwned::to_owned);
    let refused = refusal(&tls12_only, |o| {
        o.ca_file = ca;
        o.versions = TlsVersions::Tls13;
    });
    assert_eq!(refused, HandshakeRefusal::Version);
}

#[test]
fn a_server_dropping_handshakes_under_load_counts_handshake_errors() {
    for backend in BACKENDS {
        let server = https(TlsKnobs {
            drop_handshake_every: Some(3),
            ..TlsKnobs::default()
        });
        let schedule = Schedule::closed(1).with_keepalive(false);
        let mut config = schedule_config(&server, backend, schedule, 30);
        let options = config.endpoint.tls.as_mut().unwrap();
        options.ca_file = server.ca_file().map(ToOwned::to_owned);
        let report = run(config);
        let errors = report.errors;
        assert!(errors.handshake >= 5, "{backend:?}: {errors:?}");
        assert_eq!(
            report.requests + errors.handshake,
            30,
            "{backend:?}: {errors:?}"
        );
        assert_eq!(errors.total(), errors.handshake, "{backend:?}: {errors:?}");
        let tls = report.tls.unwrap();
        assert_eq!(tls.handshakes(), report.requests, "{backend:?}");
        assert_eq!(tls.handshake.summary.count, report.requests, "{backend:?}");
        assert_eq!(
            report.latency.summary.count, report.requests,
            "{backend:?}: failed handshakes are no latency"
        );
        assert_eq!(server.counters().requests_received, report.requests);
    }
}

#[test]
fn kernel_tls_runs_or_says_why_not() {
    let server = https(TlsKnobs::default());
    let mut config = schedule_config(&server, Backend::Epoll, Schedule::closed(2), 50);
    let options = config.endpoint.tls.as_mut().unwrap();
    options.ca_file = server.ca_file().map(ToOwned::to_owned);
    options.ktls = true;
    match LoadRun::prepare(config.clone()) {
        Ok(load) => {
            let report = load.run().unwrap();
            assert_eq!(report.requests, 50);
            assert!(report.tls.unwrap().ktls);
        }
        Err(LoadError::Tls(TlsError::KtlsUnavailable(why))) => {
            // This kernel has no `tls` module: the option fails, never a silent fallback.
            assert!(why.contains("tcp_available_ulp"), "{why}");
        }
        Err(other) => panic!("kTLS neither ran nor was refused for want of the module: {other}"),
    }
    config.backend = Backend::IoUring;
    let error = LoadRun::prepare(config).unwrap_err().to_string();
    assert!(
        error.contains("epoll") || error.contains("kTLS"),
        "io_uring with kTLS: {error}"
    );
}
