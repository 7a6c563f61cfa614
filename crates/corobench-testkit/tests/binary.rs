//! The `corobench-testkit` binary as a target process: configuration from
//! the environment, clear errors, and its answer to SIGTERM.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{connect_when_ready, exchange, free_port, get};
use corobench_testkit::binary_path;

fn spawn(port: u16, args: &[&str]) -> Child {
    Command::new(binary_path())
        .args(args)
        .env("PORT", port.to_string())
        .env("TARGET_NAME", "kit-under-test")
        .env_remove("DATABASE_URL")
        .env_remove("TESTKIT_FAULTS")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn sigterm(child: &Child) {
    // SAFETY: kill(2) on our own child's pid has no memory effects.
    unsafe {
        libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGTERM);
    }
}

#[test]
fn it_serves_the_contract_named_by_target_name_and_ends_on_sigterm() {
    let port = free_port();
    let mut child = spawn(port, &["--model", "event-loop"]);
    let mut stream = connect_when_ready(port, &mut child);
    let response = exchange(&mut stream, &get("/healthz"));
    assert_eq!(response.body, b"ok");
    assert_eq!(response.header("server").as_deref(), Some("kit-under-test"));
    let stats = exchange(&mut stream, &get("/stats"));
    assert!(String::from_utf8_lossy(&stats.body).contains("\"model\":\"event-loop\""));
    let db = exchange(&mut stream, &get("/db"));
    assert_eq!(db.status(), 503, "no DATABASE_URL, so no database");
    sigterm(&child);
    let status = child.wait().unwrap();
    assert!(!status.success(), "killed by the signal: {status:?}");
}

#[test]
fn with_ignore_sigterm_it_survives_sigterm() {
    let port = free_port();
    let mut child = spawn(port, &["--fault", "ignore-sigterm"]);
    let mut stream = connect_when_ready(port, &mut child);
    sigterm(&child);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "it should ignore SIGTERM"
    );
    assert_eq!(
        exchange(&mut stream, &get("/plaintext")).body,
        b"Hello, World!"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn bad_configuration_exits_2_naming_the_problem() {
    let run = |args: &[&str], port: Option<&str>| {
        let mut command = Command::new(binary_path());
        command
            .args(args)
            .env_remove("PORT")
            .env_remove("TESTKIT_FAULTS");
        if let Some(port) = port {
            command.env("PORT", port);
        }
        let output = command.output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&[], None);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("PORT is not set"), "{stderr}");
    let (code, stderr) = run(&[], Some("http"));
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("PORT=\"http\" is not a TCP port"),
        "{stderr}"
    );
    let (code, stderr) = run(&["--fault", "nope"], Some("0"));
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("--fault: unknown fault \"nope\"; known faults: wrong-body"),
        "{stderr}"
    );
    let (code, stderr) = run(&["knobs", "--status", "x"], Some("0"));
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("--status \"x\": expected a non-negative integer"),
        "{stderr}"
    );
}
