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

/// Asserts that the run ended with exit status `code`, saying `says` on stderr.
#[allow(dead_code)] // not every test file checks refusals
pub fn assert_refused(output: &Output, code: i32, says: &str) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{text}");
    assert!(text.contains(says), "expected {says:?} in: {text}");
}

/// Where `report` breaks docs/schema/load-report.schema.json; empty when it conforms.
#[allow(dead_code)] // not every test file checks JSON
pub fn load_report_schema_errors(report: &serde_json::Value) -> Vec<String> {
    let schema_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schema/load-report.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema");
    validator
        .iter_errors(report)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}
