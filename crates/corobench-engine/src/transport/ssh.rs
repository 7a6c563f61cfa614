//! The system `ssh` and `scp`, with the user's own configuration and keys.
//! `BatchMode=yes` makes a missing key or an unknown host key fail at once
//! instead of asking: corobench never handles a password.

use std::path::Path;
use std::process::Command;

use corobench_spec::HostAddress;

use super::{Transport, shell_quote};

/// How long connecting to a host may take.
const CONNECT_TIMEOUT_S: u32 = 10;
/// A silent connection is declared dead after this many keep-alives of
/// 5 s: the loss of a host is noticed within about 15 s, even when no
/// packet comes back to say so.
const ALIVE_COUNT: u32 = 3;

/// The system `ssh`, with `-F FILE` when the spec names a config.
#[derive(Clone, Debug, Default)]
pub struct Ssh {
    pub config: Option<String>,
}

impl Transport for Ssh {
    fn command(&self, host: &HostAddress, argv: &[String]) -> Command {
        let mut command = Command::new("ssh");
        // No terminal: the remote command sees the connection's end as end
        // of file on stdin, which is what stops `corobench serve`.
        command.arg("-T");
        self.common(&mut command);
        if let Some(port) = host.port {
            command.arg("-p").arg(port.to_string());
        }
        if let Some(user) = &host.user {
            command.arg("-l").arg(user);
        }
        // The remote side joins the words with spaces and hands them to the
        // login shell, so each is quoted to arrive as one word.
        let line: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
        command.arg("--").arg(&host.host).arg(line.join(" "));
        command
    }

    fn copy(&self, from: &Path, host: &HostAddress, to: &str) -> Command {
        let mut command = Command::new("scp");
        command.arg("-q");
        self.common(&mut command);
        if let Some(port) = host.port {
            command.arg("-P").arg(port.to_string());
        }
        let user = host
            .user
            .as_ref()
            .map(|u| format!("{u}@"))
            .unwrap_or_default();
        let name = if host.host.contains(':') {
            format!("[{}]", host.host)
        } else {
            host.host.clone()
        };
        command
            .arg("--")
            .arg(from)
            .arg(format!("{user}{name}:{to}"));
        command
    }

    fn client(&self) -> &'static str {
        "ssh"
    }

    fn check_hint(&self, host: &HostAddress) -> String {
        format!(
            "corobench runs `ssh` with BatchMode=yes: the host must accept your key without a \
             password prompt and be in known_hosts; check with `{}`",
            check_command(host)
        )
    }
}

impl Ssh {
    fn common(&self, command: &mut Command) {
        if let Some(config) = &self.config {
            command.arg("-F").arg(config);
        }
        for option in [
            "BatchMode=yes".to_string(),
            format!("ConnectTimeout={CONNECT_TIMEOUT_S}"),
            "ServerAliveInterval=5".to_string(),
            format!("ServerAliveCountMax={ALIVE_COUNT}"),
        ] {
            command.arg("-o").arg(option);
        }
    }
}

/// The `ssh` command that tries `host` as corobench reaches it: its port
/// and user too, or the check would try another account or port.
fn check_command(host: &HostAddress) -> String {
    let mut command = "ssh -o BatchMode=yes".to_owned();
    if let Some(port) = host.port {
        command.push_str(&format!(" -p {port}"));
    }
    if let Some(user) = &host.user {
        command.push_str(&format!(" -l {user}"));
    }
    format!("{command} {} true", host.host)
}

#[cfg(test)]
mod tests {
    use corobench_spec::parse_address;

    use super::*;

    #[test]
    fn ssh_command_line() {
        let host = parse_address("ssh://bench@10.0.0.2:2222").unwrap();
        let command = Ssh::default().command(&host, &["echo".into(), "a b".into()]);
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(args.contains(&"BatchMode=yes".to_string()));
        assert_eq!(
            &args[args.len() - 7..],
            ["-p", "2222", "-l", "bench", "--", "10.0.0.2", "echo 'a b'"]
        );
    }

    /// Issue "wrong successes", item 13: the hint dropped the port and the
    /// user, so the check it suggested tried another account or port.
    #[test]
    fn the_ssh_hint_keeps_the_port_and_the_user() {
        let host = parse_address("ssh://bench@10.0.0.2:2222").unwrap();
        assert_eq!(
            check_command(&host),
            "ssh -o BatchMode=yes -p 2222 -l bench 10.0.0.2 true"
        );
        let plain = parse_address("ssh://10.0.0.3").unwrap();
        assert_eq!(check_command(&plain), "ssh -o BatchMode=yes 10.0.0.3 true");
    }
}
