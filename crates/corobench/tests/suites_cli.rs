//! `corobench suites` lists every shipped suite with its size and time.

mod lab;

use std::path::Path;

use lab::Lab;

#[test]
fn every_shipped_suite_is_listed_with_its_description() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Lab::new()
        .command(&["suites", "--targets-dir"])
        .arg(root.join("targets"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for entry in std::fs::read_dir(root.join("suites")).unwrap() {
        let path = entry.unwrap().path();
        // A suite's helper files live in a folder beside it.
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} is not listed:\n{stdout}"));
        let text = std::fs::read_to_string(&path).unwrap();
        let described = text.lines().any(|l| l.starts_with("description"));
        assert!(!described || line.len() > name.len() + 20, "{line}");
    }
}
