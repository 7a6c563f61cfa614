//! Finding the `corobench-testkit` binary from tests, and describing it as a
//! target.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::contract::Fault;

/// The path of the `corobench-testkit` executable, built on first use with
/// `cargo build -p corobench-testkit --bin corobench-testkit
/// --message-format=json` (the cargo that runs the tests, the same target
/// directory and profile); later calls in the same process reuse it.
///
/// # Panics
/// When cargo cannot run or the build fails; the message carries cargo's
/// error output.
#[must_use]
pub fn binary_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| build_binary().unwrap_or_else(|problem| panic!("{problem}")))
}

fn build_binary() -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let output = Command::new(&cargo)
        .args([
            "build",
            "-p",
            "corobench-testkit",
            "--bin",
            "corobench-testkit",
        ])
        .arg("--message-format=json")
        .arg("--manifest-path")
        .arg(&manifest)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cargo.to_string_lossy()))?;
    if !output.status.success() {
        return Err(format!(
            "building corobench-testkit failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| message["target"]["name"] == "corobench-testkit")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| "cargo built corobench-testkit but named no executable".to_owned())
}

/// Writes `targets_dir/name/target.toml` for a program target that runs
/// `binary client {server_url}/plaintext {requests}`: a tiny client that
/// reports `req/s`, `mean-ms`, `ok` and `errors` (see [`crate::run_client`]).
/// Its `requests` parameter takes 1 to 10,000; `path = "missing"` asks for a
/// path that answers 404, so no request succeeds and the program fails.
///
/// # Errors
/// The folder or file could not be written.
pub fn write_program_target(targets_dir: &Path, name: &str, binary: &Path) -> io::Result<PathBuf> {
    let dir = targets_dir.join(name);
    fs::create_dir_all(&dir)?;
    let manifest = format!(
        "name = {name}\nkind = \"program\"\nmodel = \"goroutine-fan-out\"\n\
         summary = \"corobench's tiny test client (not a measured target)\"\n\
         language = \"Rust\"\nrequires = []\n\n\
         [run]\ncommand = [{binary}, \"client\", \"{{server_url}}/{{path}}\", \"{{requests}}\"]\n\
         time_limit_s = 60\n\n\
         [program]\nserver = \"required\"\nmetrics = [\"req/s\", \"mean-ms\", \"ok\", \"errors\"]\n\n\
         [parameters.requests]\ndefault = 10\nmin = 1\nmax = 10000\nhelp = \"GETs to send\"\n\n\
         [parameters.path]\ndefault = \"plaintext\"\nchoices = [\"plaintext\", \"missing\"]\n\
         help = \"plaintext, or missing: a path that answers 404, so every request fails\"\n",
        name = toml_string(name),
        binary = toml_string(&binary.to_string_lossy()),
    );
    fs::write(dir.join("target.toml"), manifest)?;
    Ok(dir)
}

/// Writes `targets_dir/name/target.toml` for a target that runs the
/// contract server binary (at `binary`, e.g. [`binary_path`]) with `faults`,
/// reporting `model`. Returns the target's folder.
///
/// # Errors
/// The folder or file could not be written.
pub fn write_target(
    targets_dir: &Path,
    name: &str,
    model: &str,
    binary: &Path,
    faults: &[Fault],
) -> io::Result<PathBuf> {
    let dir = targets_dir.join(name);
    fs::create_dir_all(&dir)?;
    let mut command = vec![
        toml_string(&binary.to_string_lossy()),
        toml_string("--model"),
        toml_string(model),
    ];
    for fault in faults {
        command.push(toml_string("--fault"));
        command.push(toml_string(fault.name()));
    }
    let manifest = format!(
        "name = {name}\nmodel = {model}\n\
         summary = \"corobench's contract test server, one OS thread per connection (not a measured target)\"\n\
         language = \"Rust\"\nrequires = []\n\n\
         [run]\ncommand = [{command}]\nready_timeout_s = 20\nstop_timeout_s = 5\n",
        name = toml_string(name),
        model = toml_string(model),
        command = command.join(", "),
    );
    fs::write(dir.join("target.toml"), manifest)?;
    Ok(dir)
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_runs_the_binary_with_its_faults() {
        let dir = tempfile::tempdir().unwrap();
        let binary = Path::new("/opt/a \"quoted\" dir/corobench-testkit");
        let target =
            write_target(dir.path(), "kit", "worker-pool", binary, &[Fault::Chunked]).unwrap();
        let text = fs::read_to_string(target.join("target.toml")).unwrap();
        assert!(text.contains("name = \"kit\"\n"), "{text}");
        assert!(text.contains(
            "command = [\"/opt/a \\\"quoted\\\" dir/corobench-testkit\", \"--model\", \"worker-pool\", \"--fault\", \"chunked\"]"
        ), "{text}");
    }
}
