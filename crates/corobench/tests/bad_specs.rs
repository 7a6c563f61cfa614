//! `corobench plan` on every spec of `tests/bad-specs/`: each file says in
//! its first comment lines what must be refused and how,
//!
//! ```toml
//! # expect-exit: 2
//! # expect: "connections = [8, 8] repeats 8"
//! ```
//!
//! and the binary must exit so, print each fragment on stderr, and never
//! panic. Targets come from a scratch folder: `alpha` (with a `workers`
//! parameter), `beta` and `delta` (whose `max_ms` must be at least its
//! `min_ms`, as go-ants-tasks') can run, `gamma` cannot.

mod lab;

use std::path::{Path, PathBuf};
use std::process::Output;

use lab::Lab;

/// A lab whose targets are `alpha` (with a `workers` parameter), `beta`
/// and `gamma`, which needs a command that does not exist.
fn spec_lab() -> Lab {
    let lab = Lab::new();
    for (name, requires, parameters) in [
        (
            "alpha",
            "",
            "[parameters.workers]\ndefault = 1\nmin = 1\nmax = 64\nhelp = \"worker threads\"\n",
        ),
        ("beta", "", ""),
        ("gamma", "\"corobench-no-such-command\"", ""),
        (
            "delta",
            "",
            "[parameters.min_ms]\ndefault = 10\nmin = 1\nmax = 100\n\
             [parameters.max_ms]\ndefault = 20\nmin = 1\nmax = 100\nat_least = \"min_ms\"\n",
        ),
    ] {
        let folder = lab.targets().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let manifest = format!(
            "name = \"{name}\"\nmodel = \"goroutine-per-connection\"\nsummary = \"a fixture for spec tests\"\n\
             language = \"Rust\"\nrequires = [{requires}]\n[run]\ncommand = [\"true\"]\n{parameters}"
        );
        std::fs::write(folder.join("target.toml"), manifest).unwrap();
    }
    lab
}

/// `corobench plan SPEC` against the lab's targets.
fn plan(lab: &Lab, spec: &Path) -> Output {
    let targets = lab.targets();
    lab.command(&[
        "plan",
        spec.to_str().unwrap(),
        "--targets-dir",
        targets.to_str().unwrap(),
    ])
    .output()
    .expect("corobench runs")
}

/// What a bad spec's header comments promise.
#[derive(Debug)]
struct Expectation {
    exit: i32,
    fragments: Vec<String>,
}

/// Reads `# expect-exit: N` and every `# expect: "..."` (a quoted string
/// where `\"` and `\\` stand for `"` and `\`).
fn expectation(spec: &Path) -> Expectation {
    let text = std::fs::read_to_string(spec).unwrap();
    let mut exit = None;
    let mut fragments = Vec::new();
    for line in text.lines().take_while(|l| l.starts_with('#')) {
        if let Some(code) = line.strip_prefix("# expect-exit:") {
            exit = Some(code.trim().parse().expect("expect-exit is a number"));
        } else if let Some(quoted) = line.strip_prefix("# expect:") {
            let inner = quoted
                .trim()
                .strip_prefix('"')
                .and_then(|q| q.strip_suffix('"'));
            let inner = inner.unwrap_or_else(|| panic!("{}: quote the fragment", spec.display()));
            fragments.push(inner.replace("\\\"", "\"").replace("\\\\", "\\"));
        }
    }
    let exit = exit.unwrap_or_else(|| panic!("{}: no `# expect-exit:`", spec.display()));
    assert!(!fragments.is_empty(), "{}: no `# expect:`", spec.display());
    Expectation { exit, fragments }
}

fn bad_specs() -> Vec<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad-specs");
    let mut specs: Vec<PathBuf> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    specs.sort();
    specs
}

#[test]
fn every_bad_spec_is_refused_as_its_header_says() {
    let lab = spec_lab();
    let specs = bad_specs();
    assert!(specs.len() >= 20, "only {} bad specs", specs.len());
    let mut failures = Vec::new();
    for spec in &specs {
        let expected = expectation(spec);
        let output = plan(&lab, spec);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let missing: Vec<&String> = expected
            .fragments
            .iter()
            .filter(|f| !stderr.contains(f.as_str()))
            .collect();
        if output.status.code() != Some(expected.exit)
            || !missing.is_empty()
            || stderr.contains("panicked")
        {
            failures.push(format!(
                "{}: exit {:?} (expected {}), missing {missing:?}, stderr:\n{stderr}",
                spec.display(),
                output.status.code(),
                expected.exit
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The fixtures themselves plan: what the bad specs break is theirs alone.
#[test]
fn a_good_spec_with_the_same_targets_plans() {
    let lab = spec_lab();
    let spec = lab.path("good.toml");
    let text = "targets = [\"alpha\", \"gamma\"]\n[parameters.alpha]\nworkers = [1, 2]\n\
                [parameters.gamma]\n[schedule]\nconnections = 8\nrates = [2.5, 1000]\n\
                [[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n";
    std::fs::write(&spec, text).unwrap();
    let output = plan(&lab, &spec);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("alpha/workers=2/plaintext/rate=2.5/c=8"),
        "{stdout}"
    );
    assert!(stdout.contains("skipped gamma"), "{stdout}");
}
