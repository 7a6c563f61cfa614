//! Running the `corobench` binary as a user does, for the `corobench load` tests.

use std::process::{Command, Output};

/// Runs `corobench ARGS` to the end.
pub fn corobench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_corobench"))
        .args(args)
        .output()
        .expect("corobench runs")
}

/// What the run printed on stderr.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
