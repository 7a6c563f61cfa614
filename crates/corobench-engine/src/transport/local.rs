//! This machine as a host: the argv runs here, a copy is a file copy. A
//! run whose server and generators share this machine goes through the
//! same executor as one on other hosts.

use std::path::Path;
use std::process::Command;

use corobench_spec::HostAddress;

use super::Transport;

/// Runs commands on this machine, whatever the host's name.
#[derive(Clone, Copy, Debug, Default)]
pub struct Local;

impl Transport for Local {
    fn command(&self, _host: &HostAddress, argv: &[String]) -> Command {
        let (program, args) = argv
            .split_first()
            .map_or(("true", &[][..]), |(p, rest)| (p.as_str(), rest));
        let mut command = Command::new(program);
        command.args(args);
        command
    }

    fn copy(&self, from: &Path, _host: &HostAddress, to: &str) -> Command {
        let mut command = Command::new("cp");
        command.arg("--").arg(from).arg(to);
        command
    }

    fn client(&self) -> &'static str {
        "the local shell"
    }

    fn check_hint(&self, _host: &HostAddress) -> String {
        "the command runs on this machine: check that it is on PATH".to_string()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::transport::run_bounded;

    fn here() -> HostAddress {
        HostAddress {
            text: "local".into(),
            user: None,
            host: "localhost".into(),
            port: None,
        }
    }

    #[test]
    fn commands_run_here_and_copies_are_file_copies() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("a");
        std::fs::write(&from, "bytes").unwrap();
        let to = dir.path().join("b");
        let to_text = to.to_string_lossy().into_owned();
        let limit = Duration::from_secs(10);
        run_bounded(Local.copy(&from, &here(), &to_text), "copy", limit).unwrap();
        assert_eq!(std::fs::read_to_string(&to).unwrap(), "bytes");
        let argv = ["sh".to_string(), "-c".to_string(), "echo 'a b'".to_string()];
        let out = run_bounded(Local.command(&here(), &argv), "echo", limit).unwrap();
        assert_eq!(out, "a b");
        let failed = run_bounded(Local.command(&here(), &["false".into()]), "false", limit);
        assert!(failed.unwrap_err().to_string().starts_with("false failed"));
    }
}
