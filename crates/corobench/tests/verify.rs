//! `corobench verify` end to end, with the testkit's contract server as the
//! target process.

mod lab;

use std::path::Path;
use std::process::{Command, Output};

use corobench_testkit::{Fault, binary_path, write_target};
use lab::text;
use serde_json::Value;

const MODEL: &str = "worker-pool";

fn corobench_verify(targets: &Path, cache: &Path, args: &[&str]) -> Output {
    // verify keeps the logs of a failed target in its work folder: keep that
    // folder inside the test's own scratch space.
    let scratch = cache.join("tmp");
    std::fs::create_dir_all(&scratch).unwrap();
    Command::new(env!("CARGO_BIN_EXE_corobench"))
        .arg("verify")
        .arg("--targets-dir")
        .arg(targets)
        .args(args)
        .env("COROBENCH_CACHE", cache)
        .env("TMPDIR", scratch)
        .output()
        .expect("run corobench verify")
}

fn write_manifest(targets: &Path, name: &str, body: &str) {
    let dir = targets.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = format!(
        "name = \"{name}\"\nmodel = \"{MODEL}\"\nsummary = \"a test target\"\nlanguage = \"Rust\"\n{body}"
    );
    std::fs::write(dir.join("target.toml"), manifest).unwrap();
}

#[test]
fn a_faulty_target_fails_its_rules_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("targets");
    write_target(&targets, "kit-ok", MODEL, binary_path(), &[]).unwrap();
    let faults = [
        Fault::FrozenDate,
        Fault::IgnoreSigterm,
        Fault::IgnoreListenAddr,
    ];
    write_target(&targets, "kit-faulty", MODEL, binary_path(), &faults).unwrap();
    let output = corobench_verify(&targets, &dir.path().join("cache"), &["--no-db"]);
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{stdout}\n{}",
        text(&output.stderr)
    );
    let header = stdout.lines().next().unwrap();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["rule", "kit-faulty", "kit-ok"]
    );
    let row = |rule: &str| -> Vec<String> {
        let line = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(rule))
            .unwrap();
        line.split_whitespace().skip(1).map(str::to_owned).collect()
    };
    assert_eq!(row("date-not-cached"), ["FAIL", "pass"]);
    assert_eq!(row("sigterm"), ["FAIL", "pass"]);
    assert_eq!(row("listen-addr"), ["FAIL", "pass"]);
    assert_eq!(row("json"), ["pass", "pass"]);
    assert!(
        stdout.contains("FAIL listen-addr: told LISTEN_ADDR=127.0.0.2, it never answered there"),
        "{stdout}"
    );
    assert!(
        stdout.contains("kit-faulty:\n  FAIL date-not-cached: GET /plaintext twice"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAIL sigterm: the target was still running 5s after SIGTERM"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("\nkit-ok:\n"),
        "kit-ok has nothing to report: {stdout}"
    );
}

#[test]
fn json_output_lists_every_rule_with_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("targets");
    write_target(
        &targets,
        "kit-db",
        MODEL,
        binary_path(),
        &[Fault::WrongMixedDigest],
    )
    .unwrap();
    let output = corobench_verify(&targets, &dir.path().join("cache"), &["kit-db", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let target = &document["targets"][0];
    assert_eq!(target["name"], "kit-db");
    assert_eq!(target["status"], "verified");
    let rules = target["rules"].as_array().unwrap();
    let names: Vec<&str> = rules.iter().map(|r| r["rule"].as_str().unwrap()).collect();
    let mut expected = corobench_verify::RULES.to_vec();
    expected.extend(["sigterm", "listen-addr"]);
    assert_eq!(names, expected);
    let outcome = |rule: &str| rules.iter().find(|r| r["rule"] == rule).unwrap()["outcome"].clone();
    assert_eq!(outcome("mixed"), "fail");
    let failed: Vec<&str> = rules
        .iter()
        .filter(|r| r["outcome"] == "fail")
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["mixed"]);
    // With PostgreSQL running, /db is checked against it; without, the
    // verdict says PostgreSQL did not start.
    if document["database"] == true {
        assert_eq!(outcome("db"), "pass");
    } else {
        let db = rules.iter().find(|r| r["rule"] == "db").unwrap();
        assert!(
            db["message"]
                .as_str()
                .unwrap()
                .contains("PostgreSQL did not start"),
            "{db}"
        );
    }
}

#[test]
fn targets_that_cannot_start_exit_3_and_unavailable_ones_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("targets");
    write_manifest(
        &targets,
        "exits",
        "requires = []\n[run]\ncommand = [\"false\"]\nready_timeout_s = 5\n",
    );
    write_manifest(
        &targets,
        "missing-tool",
        "requires = [\"corobench-no-such-tool\"]\nhint = \"install the tool\"\n[run]\ncommand = [\"corobench-no-such-tool\"]\n",
    );
    let output = corobench_verify(&targets, &dir.path().join("cache"), &["--no-db"]);
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{stdout}\n{}",
        text(&output.stderr)
    );
    assert!(
        stdout.contains("exits: FAILED to build or start: "),
        "{stdout}"
    );
    assert!(stdout.contains("missing-tool: skipped: "), "{stdout}");
    assert!(
        stdout.contains("corobench-no-such-tool") && stdout.contains("install the tool"),
        "{stdout}"
    );
}

#[test]
fn an_unknown_target_name_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("targets");
    write_target(&targets, "kit-ok", MODEL, binary_path(), &[]).unwrap();
    let output = corobench_verify(&targets, &dir.path().join("cache"), &["nope"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("no target named \"nope\"") && stderr.contains("kit-ok"),
        "{stderr}"
    );
}
