//! `[protocols]` in a manifest, launching a target in a protocol (its
//! environment, placeholders and readiness probe over TLS), and what is
//! refused: undeclared protocols, TLS without certificates, bad tables.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{built, options};
use corobench_target::{
    LaunchOptions, Manifest, Protocol, Protocols, RunCertificates, Support, TargetError, UNDECLARED,
};

const HEAD: &str = r#"name = "probe"
model = "worker-pool"

[run]
command = ["server"]
"#;

fn parse(protocols: &str) -> Result<Manifest, Box<TargetError>> {
    let text = format!("{HEAD}\n[protocols]\n{protocols}");
    Manifest::parse(&text, Path::new("/t/probe/target.toml")).map_err(Box::new)
}

/// The error's text, which must name the file, the line and the key.
fn error(protocols: &str) -> String {
    let error = parse(protocols).expect_err("invalid [protocols]");
    let TargetError::Manifest { line, key, .. } = error.as_ref() else {
        panic!("not a manifest error: {error}");
    };
    assert!(line.is_some_and(|l| l >= 7), "a line in the table: {error}");
    assert!(key.starts_with("protocols"), "{error}");
    error.to_string()
}

#[test]
fn served_protocols_and_reasons_are_read() {
    let manifest = parse("tls = true\nh2 = true\nh2c = \"no h2c here\"\n").unwrap();
    let protocols = &manifest.protocols;
    assert_eq!(protocols.tls, Support::Served);
    assert_eq!(protocols.h2c, Support::NotServed("no h2c here".to_owned()));
    assert_eq!(protocols.supports(Protocol::HTTP1), Ok(()));
    assert_eq!(protocols.supports(Protocol::H2), Ok(()));
    assert_eq!(protocols.supports(Protocol::H2C), Err("no h2c here"));
    assert_eq!(
        protocols.served(),
        [Protocol::HTTP1, Protocol::TLS, Protocol::H2]
    );
}

#[test]
fn a_protocol_left_out_is_not_served_and_says_so() {
    let manifest = Manifest::parse(HEAD, Path::new("/t/probe/target.toml")).unwrap();
    assert_eq!(manifest.protocols, Protocols::default());
    assert_eq!(manifest.protocols.supports(Protocol::TLS), Err(UNDECLARED));
    assert_eq!(manifest.protocols.served(), [Protocol::HTTP1]);
    let tls_only = parse("tls = true\n").unwrap();
    assert_eq!(tls_only.protocols.supports(Protocol::H2), Err(UNDECLARED));
}

#[test]
fn bad_tables_are_refused_with_their_line_and_key() {
    let unknown = error("tls = true\nh3 = true\n");
    assert!(
        unknown.contains("protocols.h3: unknown protocol; declare one of tls, h2, h2c"),
        "{unknown}"
    );
    assert!(unknown.contains("target.toml:9:"), "{unknown}");
    let number = error("tls = 1\n");
    assert!(
        number.contains("protocols.tls: must be true (served) or a reason"),
        "{number}"
    );
    assert!(number.contains("not a integer"), "{number}");
    let falsy = error("h2c = false\n");
    assert!(falsy.contains("say why it is not served"), "{falsy}");
    let blank = error("h2c = \"  \"\n");
    assert!(blank.contains("say why it is not served"), "{blank}");
    let h2_alone = error("h2 = true\n");
    assert!(h2_alone.contains("declare tls = true too"), "{h2_alone}");
    let not_a_table = Manifest::parse(
        &format!("{HEAD}\nprotocols = true\n"),
        Path::new("/t/probe/target.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(not_a_table.contains("protocols"), "{not_a_table}");
}

#[test]
fn a_program_declares_no_protocols() {
    let text = r#"name = "probe"
model = "goroutine-fan-out"
kind = "program"

[program]
server = "none"
metrics = ["ns/op"]

[run]
command = ["bench"]

[protocols]
tls = true
"#;
    let error = Manifest::parse(text, Path::new("/t/probe/target.toml"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("a program serves nothing"), "{error}");
}

#[test]
fn a_user_server_declares_protocols_in_its_table() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "[servers.api]\ncommand = \"./api --cert {tls_cert} --key {tls_key}\"\n\
                [servers.api.protocols]\ntls = true\n";
    let servers = corobench_target::inline_servers(spec, Some(&dir.path().join("s.toml"))).unwrap();
    assert_eq!(servers[0].protocols.supports(Protocol::TLS), Ok(()));
    assert_eq!(servers[0].run.command[2], "{tls_cert}");
}

#[test]
fn a_target_over_tls_gets_the_files_and_is_probed_over_tls() {
    let (scratch, target) = built("web-tls");
    let certificates = RunCertificates::create(&scratch.path().join("tls"), &[]).unwrap();
    let files = certificates.files().clone();
    let launch = LaunchOptions {
        protocol: Protocol::TLS,
        tls: Some(files.clone()),
        ..options(scratch.path())
    };
    let mut running = target.launch(&launch).unwrap();
    running.wait_healthy(Duration::from_secs(30)).unwrap();
    assert_eq!(running.protocol(), Protocol::TLS);
    let report = std::fs::read_to_string(running.work_dir().join("protocol")).unwrap();
    let (cert, key) = (files.cert.display(), files.key.display());
    assert_eq!(
        report,
        format!("HTTP_PROTOCOL=http/1.1\nTLS_CERT={cert}\nTLS_KEY={key}\nargs={cert} {key}\n")
    );
    running.stop().unwrap();
}

#[test]
fn in_cleartext_no_tls_file_is_given() {
    let (scratch, target) = built("web-tls");
    let mut running = target.launch(&options(scratch.path())).unwrap();
    running.wait_healthy(Duration::from_secs(30)).unwrap();
    let report = std::fs::read_to_string(running.work_dir().join("protocol")).unwrap();
    assert_eq!(
        report,
        "HTTP_PROTOCOL=http/1.1\nTLS_CERT=\nTLS_KEY=\nargs= \n"
    );
    running.stop().unwrap();
}

#[test]
fn a_cleartext_target_is_not_ready_over_tls() {
    let (scratch, target) = built("web");
    let certificates = RunCertificates::create(&scratch.path().join("tls"), &[]).unwrap();
    // `web` declares nothing: force the question through a copy that claims TLS.
    let mut target = target;
    target.manifest.protocols.tls = Support::Served;
    let launch = LaunchOptions {
        protocol: Protocol::TLS,
        tls: Some(certificates.files().clone()),
        ..options(scratch.path())
    };
    let mut running = target.launch(&launch).unwrap();
    let error = running
        .wait_healthy(Duration::from_secs(2))
        .unwrap_err()
        .to_string();
    assert!(error.contains("was not ready"), "{error}");
}

#[test]
fn undeclared_protocols_and_tls_without_certificates_are_refused() {
    let (scratch, target) = built("web-tls");
    let h2 = LaunchOptions {
        protocol: Protocol::H2,
        ..options(scratch.path())
    };
    let error = target.launch(&h2).unwrap_err().to_string();
    assert_eq!(
        error,
        "target web-tls does not serve h2: http.server speaks HTTP/1.1 only"
    );
    let tls = LaunchOptions {
        protocol: Protocol::TLS,
        ..options(scratch.path())
    };
    let error = target.launch(&tls).unwrap_err().to_string();
    assert!(error.contains("no certificates were given"), "{error}");
}
