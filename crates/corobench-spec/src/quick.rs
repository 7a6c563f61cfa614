//! The quick form: servers given as commands (or addresses) and one
//! request, written as the spec a user would write (`[servers.NAME]`, one
//! workload and the run's settings), so a quick experiment runs as any
//! suite does and can grow into one.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use crate::defaults::{DEFAULT_DURATION, DEFAULT_WARMUP};

/// Servers and one request, as a person gives them on one line.
#[derive(Debug, Clone, PartialEq)]
pub struct QuickForm {
    /// Each server as (name, command): `{port}` in the command is the port
    /// it must listen on; a command that is an `http://` or `https://` URL
    /// is a server already running there. Names are unique.
    pub servers: Vec<(String, String)>,
    /// Which process is sampled for a server already running, by id:
    /// `NAME=PID`, or a bare PID when one server alone is already running.
    pub pids: Vec<String>,
    /// As `pids`, by the process's name: `NAME=PROCESS` or `PROCESS`.
    pub processes: Vec<String>,
    /// The request: path and query, method, headers and body.
    pub path: String,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
    /// What a correct answer has: its status and a piece of its body.
    pub expect_status: Option<u16>,
    pub expect_body: Option<String>,
    /// When a started server is ready (a path, or `port`), and how long it
    /// may take.
    pub ready: String,
    pub ready_timeout: Option<Duration>,
    /// The started servers' working directory (absolute).
    pub cwd: PathBuf,
    /// CPU lists for the servers and the load generator.
    pub server_cpus: Option<String>,
    pub generator_cpus: Option<String>,
    /// The schedule: connections, and an open-loop rate.
    pub connections: u32,
    pub rate_per_s: Option<f64>,
    pub protocol: QuickProtocol,
    /// Trials per server, and each trial's window, warm-up and idle time.
    pub trials: u32,
    pub duration: Option<Duration>,
    pub warmup: Option<Duration>,
    pub idle: Option<Duration>,
}

/// What the quick form's servers are spoken to in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuickProtocol {
    /// HTTP/1.1 over TLS (implied by an `https://` server).
    pub tls: bool,
    /// HTTP/2 over TLS.
    pub h2: bool,
    /// Cleartext HTTP/2 by prior knowledge.
    pub h2c: bool,
    /// HTTP/2 streams open at once on each connection.
    pub streams: Option<u32>,
    /// A full handshake on every new connection instead of resuming.
    pub no_tls_resume: bool,
    /// For servers already running at an `https://` URL: a CA's PEM file
    /// trusted besides the built-in roots, or no certificate check.
    pub ca: Option<PathBuf>,
    pub insecure: bool,
}

/// Which way a server already running is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// By process id.
    Pid,
    /// By process name.
    Process,
}

/// Why servers and a request make no spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuickFormError {
    /// A bare PID or process name, and not exactly one server already running.
    #[error(
        "{given}: say which server it is, NAME={given}: {}",
        running_servers(.running)
    )]
    WhichServer {
        sampling: Sampling,
        given: String,
        running: Vec<String>,
    },
    /// A PID or process name for a server corobench starts, or none at all.
    #[error(
        "{given}: {name} is not a server given as NAME=http://HOST:PORT; corobench starts the \
         others itself and samples what it starts"
    )]
    NotRunning {
        sampling: Sampling,
        given: String,
        name: String,
    },
    /// A PID that is no positive whole number.
    #[error("{given}: {value:?} is not a process id, a positive whole number")]
    NotPid { given: String, value: String },
    /// Servers at `https://` and at `http://` in one comparison.
    #[error(
        "{} at https:// and {} at http:// would be measured in different protocols, which are \
         not compared: give them all one scheme",
        .https.join(", "),
        .plain.join(", ")
    )]
    MixedSchemes {
        https: Vec<String>,
        plain: Vec<String>,
    },
    /// TLS asked for, and a server already running in cleartext.
    #[error(
        "{} already running at http://, which speaks cleartext: give its https:// URL, or \
         measure it in cleartext",
        .plain.join(", ")
    )]
    TlsToCleartext {
        /// HTTP/2 over TLS was asked for (else HTTP/1.1 over TLS).
        h2: bool,
        plain: Vec<String>,
    },
    /// Cleartext HTTP/2 asked for, and a server already running over TLS.
    #[error(
        "{} already running at https://, which speaks TLS; HTTP/2 over TLS is h2",
        .https.join(", ")
    )]
    CleartextToTls { https: Vec<String> },
    /// A CA or no certificate check, and no server already running over TLS.
    #[error(
        "a CA to trust, or no certificate check, is for servers already running at an https:// \
         URL; a server corobench starts gets the run's own certificate, which the generator \
         trusts"
    )]
    TrustWithoutTls,
    /// Several streams per connection without HTTP/2.
    #[error("several streams per connection are HTTP/2's: speak h2 or h2c")]
    StreamsWithoutHttp2,
}

fn running_servers(running: &[String]) -> String {
    if running.is_empty() {
        "it is for a server already running, and none is given as NAME=http://HOST:PORT".to_owned()
    } else {
        format!(
            "the servers already running are {}, given as NAME=http://HOST:PORT",
            running.join(", ")
        )
    }
}

impl QuickForm {
    /// The spec the quick form stands for (without a comment saying who
    /// wrote it: the caller knows).
    ///
    /// # Errors
    /// A PID or process that names no server already running, or protocol
    /// choices that contradict the servers' URLs or each other.
    pub fn spec_text(&self) -> Result<String, QuickFormError> {
        let running: Vec<&str> = self
            .servers
            .iter()
            .filter(|(_, command)| is_address(command))
            .map(|(name, _)| name.as_str())
            .collect();
        let at_scheme = |scheme: &str| -> Vec<&str> {
            self.servers
                .iter()
                .filter(|(_, command)| command.starts_with(scheme))
                .map(|(name, _)| name.as_str())
                .collect()
        };
        let protocol_keys = self
            .protocol
            .schedule_keys(&at_scheme("https://"), &at_scheme("http://"))?;
        let sampled = Sampled {
            pids: assigned(Sampling::Pid, &self.pids, &running)?,
            processes: assigned(Sampling::Process, &self.processes, &running)?,
        };
        let names: Vec<String> = self.servers.iter().map(|(n, _)| toml_string(n)).collect();
        let mut spec = format!("name = \"bench\"\ntargets = [{}]\n", names.join(", "));
        spec.push_str(&self.run_table());
        let _ = write!(spec, "\n[schedule]\nconnections = {}\n", self.connections);
        if let Some(rate) = self.rate_per_s {
            let _ = writeln!(spec, "rates = [{rate}]");
        }
        spec.push_str(&protocol_keys);
        spec.push_str(&self.workload());
        for (name, command) in &self.servers {
            spec.push_str(&self.server_table(name, command, &sampled));
        }
        Ok(spec)
    }

    /// `[servers.NAME]` of one server.
    fn server_table(&self, name: &str, command: &str, sampled: &Sampled) -> String {
        let table = format!("servers.{}", table_key(name));
        let mut text = format!("\n[{table}]\n");
        if is_address(command) {
            let _ = writeln!(text, "url = {}", toml_string(command));
            text.push_str(&sampled.keys(name));
            text.push_str(&self.protocol.running_keys(&table, command));
            return text;
        }
        let _ = write!(
            text,
            "command = {}\ncwd = {}\nready = {}\n",
            toml_string(command),
            toml_string(&self.cwd.display().to_string()),
            toml_string(&self.ready),
        );
        if let Some(timeout) = self.ready_timeout {
            // Whole seconds, at least one.
            let seconds = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
            let _ = writeln!(text, "ready_timeout_s = {}", seconds.max(1));
        }
        text.push_str(&self.protocol.started_keys(&table));
        text
    }

    /// `[run]`: trials, window, warm-up and idle, and where the servers and
    /// the generator run when the form says.
    fn run_table(&self) -> String {
        let duration = |d: Option<Duration>, default| {
            humantime::format_duration(d.unwrap_or(default)).to_string()
        };
        let mut table = format!(
            "\n[run]\ntrials = {}\nduration = \"{}\"\nwarmup = \"{}\"\n",
            self.trials,
            duration(self.duration, DEFAULT_DURATION),
            duration(self.warmup, DEFAULT_WARMUP),
        );
        let optional = [
            ("idle", self.idle.map(|d| duration(Some(d), d))),
            ("server_cpus", self.server_cpus.clone()),
            ("generator_cpus", self.generator_cpus.clone()),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                let _ = writeln!(table, "{key} = {}", toml_string(&value));
            }
        }
        table
    }

    /// `[[workloads]]`: the one request and what a correct answer has.
    fn workload(&self) -> String {
        let mut text = format!(
            "\n[[workloads]]\nname = \"request\"\npath = {}\nmethod = {}\n",
            toml_string(&self.path),
            toml_string(&self.method)
        );
        if !self.headers.is_empty() {
            let pairs: Vec<String> = self
                .headers
                .iter()
                .map(|(name, value)| format!("{} = {}", toml_string(name), toml_string(value)))
                .collect();
            let _ = writeln!(text, "headers = {{ {} }}", pairs.join(", "));
        }
        if let Some(body) = &self.body {
            let _ = writeln!(text, "body = {}", toml_string(body));
        }
        if let Some(status) = self.expect_status {
            let _ = writeln!(text, "expect_status = {status}");
        }
        if let Some(piece) = &self.expect_body {
            let _ = writeln!(text, "expect_body = {}", toml_string(piece));
        }
        text
    }
}

impl QuickProtocol {
    /// `[schedule]`'s protocol keys for servers of which `https` are at an
    /// `https://` URL and `plain` at an `http://` one.
    fn schedule_keys(&self, https: &[&str], plain: &[&str]) -> Result<String, QuickFormError> {
        self.refuse_contradictions(https, plain)?;
        let mut keys = String::new();
        if self.h2 || self.h2c {
            let name = if self.h2 { "h2" } else { "h2c" };
            let _ = writeln!(keys, "protocol = \"{name}\"");
        } else if self.tls || !https.is_empty() {
            keys.push_str("tls = true\n");
        }
        if let Some(streams) = self.streams {
            let _ = writeln!(keys, "streams = {streams}");
        }
        if self.no_tls_resume {
            keys.push_str("tls_resume = false\n");
        }
        Ok(keys)
    }

    /// What a server corobench starts declares it serves: the protocol
    /// asked for.
    fn started_keys(&self, table: &str) -> String {
        match self.declared() {
            Some(name) => format!("\n[{table}.protocols]\n{name} = true\n"),
            None => String::new(),
        }
    }

    /// The keys of a server already running at `url`: how its certificate
    /// is trusted, and HTTP/2 declared when it is asked for.
    fn running_keys(&self, table: &str, url: &str) -> String {
        let mut keys = String::new();
        if url.starts_with("https://") {
            if let Some(ca) = &self.ca {
                let _ = writeln!(keys, "ca = {}", toml_string(&ca.display().to_string()));
            }
            if self.insecure {
                keys.push_str("insecure = true\n");
            }
        }
        if self.h2 || self.h2c {
            keys.push_str(&self.started_keys(table));
        }
        keys
    }

    /// The `[protocols]` key of the protocol asked for; `None` for
    /// cleartext HTTP/1.1, which every server serves.
    fn declared(&self) -> Option<&'static str> {
        if self.h2 {
            Some("h2")
        } else if self.h2c {
            Some("h2c")
        } else if self.tls {
            Some("tls")
        } else {
            None
        }
    }

    fn refuse_contradictions(&self, https: &[&str], plain: &[&str]) -> Result<(), QuickFormError> {
        let owned = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect();
        if !https.is_empty() && !plain.is_empty() {
            return Err(QuickFormError::MixedSchemes {
                https: owned(https),
                plain: owned(plain),
            });
        }
        if (self.tls || self.h2) && !plain.is_empty() {
            return Err(QuickFormError::TlsToCleartext {
                h2: self.h2,
                plain: owned(plain),
            });
        }
        if self.h2c && !https.is_empty() {
            return Err(QuickFormError::CleartextToTls {
                https: owned(https),
            });
        }
        if (self.ca.is_some() || self.insecure) && https.is_empty() {
            return Err(QuickFormError::TrustWithoutTls);
        }
        if self.streams.is_some_and(|m| m > 1) && !(self.h2 || self.h2c) {
            return Err(QuickFormError::StreamsWithoutHttp2);
        }
        Ok(())
    }
}

/// Which process each server already running is sampled by.
struct Sampled {
    pids: Vec<(String, String)>,
    processes: Vec<(String, String)>,
}

impl Sampled {
    /// `pid = …` and `process = …` of server `name`, as given (the spec
    /// refuses both at once, saying so).
    fn keys(&self, name: &str) -> String {
        let find = |list: &[(String, String)]| {
            list.iter()
                .find(|(server, _)| server == name)
                .map(|(_, value)| value.clone())
        };
        let mut keys = String::new();
        if let Some(pid) = find(&self.pids) {
            let _ = writeln!(keys, "pid = {pid}");
        }
        if let Some(process) = find(&self.processes) {
            let _ = writeln!(keys, "process = {}", toml_string(&process));
        }
        keys
    }
}

/// PIDs or process names as (server, value): `NAME=VALUE`, or a bare value
/// when exactly one server is already running.
fn assigned(
    sampling: Sampling,
    given: &[String],
    running: &[&str],
) -> Result<Vec<(String, String)>, QuickFormError> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for text in given {
        let (name, value) = match text.split_once('=') {
            Some((name, value)) => (name.trim().to_owned(), value.trim().to_owned()),
            None if running.len() == 1 => (running[0].to_owned(), text.trim().to_owned()),
            None => {
                return Err(QuickFormError::WhichServer {
                    sampling,
                    given: text.clone(),
                    running: running.iter().map(|n| (*n).to_owned()).collect(),
                });
            }
        };
        if !running.contains(&name.as_str()) {
            return Err(QuickFormError::NotRunning {
                sampling,
                given: text.clone(),
                name,
            });
        }
        if sampling == Sampling::Pid && !value.parse::<i32>().is_ok_and(|pid| pid > 0) {
            return Err(QuickFormError::NotPid {
                given: text.clone(),
                value,
            });
        }
        pairs.push((name, value));
    }
    Ok(pairs)
}

fn is_address(command: &str) -> bool {
    command.starts_with("http://") || command.starts_with("https://")
}

/// A server's name as a table key: bare unless a dot would split it.
fn table_key(name: &str) -> String {
    if name.contains('.') {
        toml_string(name)
    } else {
        name.to_owned()
    }
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(servers: &[(&str, &str)], protocol: QuickProtocol) -> QuickForm {
        QuickForm {
            servers: servers
                .iter()
                .map(|(n, c)| ((*n).to_owned(), (*c).to_owned()))
                .collect(),
            pids: Vec::new(),
            processes: Vec::new(),
            path: "/json".to_owned(),
            method: "GET".to_owned(),
            headers: Vec::new(),
            body: None,
            expect_status: None,
            expect_body: None,
            ready: "port".to_owned(),
            ready_timeout: None,
            cwd: PathBuf::from("/srv"),
            server_cpus: None,
            generator_cpus: None,
            connections: 8,
            rate_per_s: None,
            protocol,
            trials: 2,
            duration: None,
            warmup: None,
            idle: None,
        }
    }

    #[test]
    fn choices_become_schedule_keys_and_declarations() {
        let h2 = QuickProtocol {
            h2: true,
            streams: Some(10),
            ..QuickProtocol::default()
        };
        assert_eq!(
            h2.schedule_keys(&[], &[]).unwrap(),
            "protocol = \"h2\"\nstreams = 10\n"
        );
        assert_eq!(
            h2.started_keys("servers.a"),
            "\n[servers.a.protocols]\nh2 = true\n"
        );
        let implied = QuickProtocol::default();
        assert_eq!(
            implied.schedule_keys(&["live"], &[]).unwrap(),
            "tls = true\n"
        );
        let insecure = QuickProtocol {
            insecure: true,
            ..QuickProtocol::default()
        };
        assert_eq!(
            insecure.running_keys("servers.live", "https://127.0.0.1:8443"),
            "insecure = true\n"
        );
    }

    #[test]
    fn contradictions_are_refused_with_the_servers_named() {
        let cases = [
            (
                QuickProtocol {
                    tls: true,
                    ..QuickProtocol::default()
                },
                vec![],
                vec!["live"],
                "live already running at http://",
            ),
            (
                QuickProtocol {
                    h2c: true,
                    ..QuickProtocol::default()
                },
                vec!["live"],
                vec![],
                "live already running at https://",
            ),
            (
                QuickProtocol {
                    streams: Some(4),
                    ..QuickProtocol::default()
                },
                vec![],
                vec![],
                "streams per connection are HTTP/2's",
            ),
            (
                QuickProtocol {
                    insecure: true,
                    ..QuickProtocol::default()
                },
                vec![],
                vec![],
                "for servers already running at an https:// URL",
            ),
            (
                QuickProtocol::default(),
                vec!["a"],
                vec!["b"],
                "different protocols",
            ),
        ];
        for (protocol, https, plain, says) in cases {
            let error = protocol
                .schedule_keys(&https, &plain)
                .unwrap_err()
                .to_string();
            assert!(error.contains(says), "{error}");
        }
    }

    #[test]
    fn a_started_server_and_one_running_become_server_tables() {
        let mut quick = form(
            &[
                ("api", "./api --port {port}"),
                ("live.v2", "http://127.0.0.1:8080"),
            ],
            QuickProtocol::default(),
        );
        quick.pids = vec!["live.v2=4242".to_owned()];
        quick.headers = vec![("Accept".to_owned(), "application/json".to_owned())];
        quick.ready_timeout = Some(Duration::from_millis(1500));
        let spec = quick.spec_text().unwrap();
        assert!(
            spec.contains("targets = [\"api\", \"live.v2\"]\n"),
            "{spec}"
        );
        assert!(spec.contains("\n[schedule]\nconnections = 8\n"), "{spec}");
        assert!(
            spec.contains("headers = { \"Accept\" = \"application/json\" }\n"),
            "{spec}"
        );
        assert!(
            spec.contains(
                "\n[servers.api]\ncommand = \"./api --port {port}\"\ncwd = \"/srv\"\n\
                 ready = \"port\"\nready_timeout_s = 2\n"
            ),
            "{spec}"
        );
        assert!(
            spec.contains("\n[servers.\"live.v2\"]\nurl = \"http://127.0.0.1:8080\"\npid = 4242\n"),
            "{spec}"
        );
    }

    #[test]
    fn a_pid_or_process_must_name_a_server_already_running() {
        let mut quick = form(
            &[("api", "./api {port}"), ("live", "http://127.0.0.1:8080")],
            QuickProtocol::default(),
        );
        quick.processes = vec!["api=nginx".to_owned()];
        assert_eq!(
            quick.spec_text().unwrap_err(),
            QuickFormError::NotRunning {
                sampling: Sampling::Process,
                given: "api=nginx".to_owned(),
                name: "api".to_owned(),
            }
        );
        quick.processes = vec!["nginx".to_owned()];
        let spec = quick.spec_text().unwrap();
        assert!(spec.contains("process = \"nginx\"\n"), "{spec}");
        quick.pids = vec!["live=0".to_owned()];
        assert!(
            quick
                .spec_text()
                .unwrap_err()
                .to_string()
                .contains("\"0\" is not a process id"),
        );
    }
}
