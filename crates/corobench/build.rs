//! Records the git commit corobench was built from, for the provenance of
//! runs, and its date, for the manual page.

use std::process::Command;

/// What `git ARGS` prints, trimmed; empty outside a git checkout.
fn git(args: &[&str]) -> String {
    Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn main() {
    let commit = git(&["describe", "--always", "--dirty", "--abbrev=12"]);
    // The commit's date rather than the build's, so a build repeats its page.
    let date = git(&["show", "-s", "--format=%cs", "HEAD"]);
    println!("cargo:rustc-env=COROBENCH_COMMIT={commit}");
    println!("cargo:rustc-env=COROBENCH_COMMIT_DATE={date}");
    println!("cargo:rerun-if-changed=../../.git/HEAD");
    println!("cargo:rerun-if-changed=../../.git/index");
}
