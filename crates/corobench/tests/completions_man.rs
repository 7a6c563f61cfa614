//! `corobench completions` and `corobench man` as a user runs them: scripts
//! that name every subcommand and that bash accepts, and manual pages that
//! mandoc parses.
//!
//! The manual pages need `mandoc` (Debian: `apt-get install mandoc`;
//! `scripts/deps.sh test` installs it). Without it the test fails, unless
//! COROBENCH_ALLOW_MISSING_MANDOC is set.

mod lab;

use std::io::ErrorKind;
use std::path::Path;
use std::process::Command;

use clap::CommandFactory as _;
use corobench::cli::Cli;
use lab::{Lab, corobench};

/// stdout of a command that must succeed.
fn stdout_of(args: &[&str]) -> String {
    let output = corobench(args);
    assert!(
        output.status.success(),
        "corobench {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

/// Every visible subcommand, as the words that name it (`["targets", "list"]`).
fn subcommand_paths() -> Vec<Vec<String>> {
    fn walk(command: &clap::Command, prefix: &[String], paths: &mut Vec<Vec<String>>) {
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
            let mut path = prefix.to_vec();
            path.push(sub.get_name().to_owned());
            walk(sub, &path, paths);
            paths.push(path);
        }
    }
    let mut paths = Vec::new();
    walk(&Cli::command(), &[], &mut paths);
    paths
}

/// The top-level subcommands, `help` aside.
fn top_level_subcommands() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_owned())
        .collect()
}

#[test]
fn the_bash_script_is_valid_bash() {
    let dir = Lab::new();
    let script = dir.root().join("corobench.bash");
    std::fs::write(&script, stdout_of(&["completions", "bash"])).unwrap();
    let check = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .expect("bash runs");
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn every_script_names_every_subcommand() {
    let subcommands = top_level_subcommands();
    assert!(subcommands.iter().any(|s| s == "completions"));
    assert!(subcommands.iter().any(|s| s == "man"));
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout_of(&["completions", shell]);
        for subcommand in &subcommands {
            assert!(
                script.contains(subcommand.as_str()),
                "the {shell} script does not mention {subcommand}"
            );
        }
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let output = corobench(&["completions", "tcsh"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn the_main_page_lists_every_subcommand() {
    let page = stdout_of(&["man"]);
    assert!(page.starts_with(".ie") || page.starts_with(".TH"), "{page}");
    for subcommand in top_level_subcommands() {
        let reference = format!("corobench\\-{}(1)", subcommand.replace('-', "\\-"));
        assert!(page.contains(&reference), "no {reference} in:\n{page}");
    }
}

#[test]
fn every_page_parses() {
    let dir = Lab::new();
    let mut paths = subcommand_paths();
    paths.push(Vec::new());
    for path in paths {
        let mut args = vec!["man"];
        args.extend(path.iter().map(String::as_str));
        let page = dir.root().join(format!("corobench-{}.1", path.join("-")));
        std::fs::write(&page, stdout_of(&args)).unwrap();
        if !mandoc_parses(&page) {
            return;
        }
    }
}

/// Runs `mandoc -T lint` on `page` and fails on a parse error; `false` when
/// mandoc is missing and that is allowed. Warnings are not failures:
/// clap_mangen's lists of possible values carry redundant line breaks that
/// mandoc only mentions.
fn mandoc_parses(page: &Path) -> bool {
    let lint = match Command::new("mandoc")
        .args(["-T", "lint", "-W", "error"])
        .arg(page)
        .output()
    {
        Ok(lint) => lint,
        Err(error) if error.kind() == ErrorKind::NotFound => {
            assert!(
                std::env::var_os("COROBENCH_ALLOW_MISSING_MANDOC").is_some(),
                "mandoc is needed to check the manual pages: on Debian `apt-get install mandoc` \
                 (scripts/deps.sh test does), or set COROBENCH_ALLOW_MISSING_MANDOC=1 to skip"
            );
            eprintln!("skipped: mandoc not found (on Debian: apt-get install mandoc)");
            return false;
        }
        Err(error) => panic!("mandoc cannot run: {error}"),
    };
    assert!(
        lint.status.success(),
        "mandoc -T lint {}:\n{}{}",
        page.display(),
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );
    true
}

#[test]
fn a_page_for_an_unknown_subcommand_is_a_usage_error() {
    let output = corobench(&["man", "targets", "nope"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("list, build"), "{stderr}");
}
