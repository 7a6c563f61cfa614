//! A server that is already running (`[servers.NAME] url = ...`): measured
//! where it is, never started, restarted or stopped by corobench. Its
//! process group is sampled when the spec names its pid or its process name.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::error::TargetError;
use crate::executable::file_digest;
use crate::manifest::Manifest;
use crate::procfs::{self, ProcStat};

/// How long the server has to accept the connection that shows it is there.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Where an already running server is, as its spec says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Attachment {
    /// As the spec gives it, e.g. `http://127.0.0.1:8080`.
    pub url: String,
    pub addr: SocketAddr,
    /// Set for an `https://` URL: how its certificate is trusted.
    pub tls: Option<AttachedTls>,
    /// The process whose group is sampled; `None`: nothing is sampled.
    pub process: Option<ProcessRef>,
    /// `spec.toml:12`: where the server is declared, for errors found later.
    pub declared_at: String,
}

/// How the certificate of a server at an `https://` URL is trusted: the
/// built-in roots, plus the spec's `ca` file; or not checked (`insecure`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AttachedTls {
    pub ca: Option<PathBuf>,
    pub insecure: bool,
}

/// How the spec names the server's process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProcessRef {
    Pid(i32),
    /// Matched against `/proc/PID/comm` and the file name of `argv[0]`.
    Name(String),
}

/// Why a server's URL is not `http://HOST:PORT` or `https://HOST:PORT`.
#[derive(Debug, thiserror::Error)]
pub enum UrlError {
    #[error("must start with http:// or https://, e.g. \"http://127.0.0.1:8080\"")]
    Scheme,
    #[error(
        "must be the server's address without a path, e.g. \"http://127.0.0.1:8080\": each \
         workload gives its own path"
    )]
    Path,
    #[error("must name the port, e.g. \"http://127.0.0.1:8080\"")]
    NoPort,
    /// `user:password@` before the host, which is the address without it.
    #[error(
        "carries user info (user:password@), which is not supported: remove it, e.g. \
         \"http://{host}\"; a server that wants credentials gets them in a header"
    )]
    UserInfo { host: String },
    /// The host does not resolve (`source`), or resolves to no address.
    #[error("{authority} {}", match .source {
        Some(error) => format!("does not resolve: {error}"),
        None => "resolves to no address".to_owned(),
    })]
    Unresolved {
        authority: String,
        source: Option<std::io::Error>,
    },
}

impl Attachment {
    /// The address of `url`: `http://HOST:PORT` or `https://HOST:PORT`,
    /// without a path (each workload gives its own).
    ///
    /// # Errors
    /// Another scheme, a path, no port, or a host that does not resolve.
    pub fn address_of(url: &str) -> Result<SocketAddr, UrlError> {
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"))
            .ok_or(UrlError::Scheme)?;
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if let Some((_, host)) = authority.rsplit_once('@') {
            return Err(UrlError::UserInfo {
                host: host.to_owned(),
            });
        }
        if authority.contains(['/', '?', '#']) {
            return Err(UrlError::Path);
        }
        if authority
            .rsplit_once(':')
            .is_none_or(|(_, port)| port.is_empty())
        {
            return Err(UrlError::NoPort);
        }
        let unresolved = |source| UrlError::Unresolved {
            authority: authority.to_owned(),
            source,
        };
        authority
            .to_socket_addrs()
            .map_err(|e| unresolved(Some(e)))?
            .next()
            .ok_or_else(|| unresolved(None))
    }
}

/// An already running server, found: it accepts connections, and its
/// process (when the spec names one) is alive.
#[derive(Clone, Debug)]
pub struct AttachedServer {
    pub name: String,
    pub url: String,
    pub addr: SocketAddr,
    /// The named process, if any.
    pub pid: Option<i32>,
    /// Its process group: what the sampler follows.
    pub pgid: Option<i32>,
    /// Set when its URL is `https://`.
    pub tls: Option<AttachedTls>,
}

/// Finds the server `manifest` says is already running.
///
/// # Errors
/// The manifest is not of such a server, its URL refuses connections, or
/// its process cannot be found.
pub fn attach(manifest: &Manifest) -> Result<AttachedServer, TargetError> {
    let Some(attachment) = &manifest.attach else {
        return Err(TargetError::Config {
            message: format!("{} is not a server that is already running", manifest.name),
        });
    };
    let name = &manifest.name;
    let place = |message: String| format!("{} (server {name}): {message}", attachment.declared_at);
    let process = match &attachment.process {
        None => None,
        Some(wanted) => Some(find_process(wanted).map_err(|missing| match missing {
            Missing::NotRunning(message) => TargetError::NotRunning {
                message: place(message),
            },
            Missing::Ambiguous(message) => TargetError::Config {
                message: place(message),
            },
        })?),
    };
    TcpStream::connect_timeout(&attachment.addr, CONNECT_TIMEOUT).map_err(|e| {
        TargetError::NotRunning {
            message: place(format!(
                "{} refuses connections ({e}): start the server first, or give \
                 servers.{name}.command instead of url so that corobench starts it{}",
                attachment.url,
                other_family(attachment.addr)
            )),
        }
    })?;
    if let (Some(process), Some(wanted)) = (&process, &attachment.process) {
        serves_the_url(process, wanted, attachment).map_err(|message| TargetError::Config {
            message: place(message),
        })?;
    }
    Ok(AttachedServer {
        name: name.clone(),
        url: attachment.url.clone(),
        addr: attachment.addr,
        pid: process.as_ref().map(|p| p.pid),
        pgid: process.as_ref().map(|p| p.pgrp),
        tls: attachment.tls.clone(),
    })
}

impl AttachedServer {
    /// Why the server is no longer there (its process exited, or its port
    /// refuses connections); `None` while it is.
    #[must_use]
    pub fn gone(&self) -> Option<String> {
        if let Some(pid) = self.pid
            && !read_stat(pid).is_some_and(|s| s.is_live())
        {
            return Some(format!("process {pid} of {} exited", self.name));
        }
        TcpStream::connect_timeout(&self.addr, CONNECT_TIMEOUT)
            .err()
            .map(|e| format!("{} no longer accepts connections ({e})", self.url))
    }
}

/// What a run records of an already running server: where it was, and,
/// when its process is known, its command line and executable's digest.
#[must_use]
pub fn attached_provenance(manifest: &Manifest) -> Vec<(String, String)> {
    let Some(attachment) = &manifest.attach else {
        return Vec::new();
    };
    let name = &manifest.name;
    let mut found = vec![(
        format!("{name} url"),
        format!(
            "{}: already running, not started fresh by corobench",
            attachment.url
        ),
    )];
    let pid = attachment
        .process
        .as_ref()
        .and_then(|wanted| find_process(wanted).ok())
        .map(|p| p.pid);
    if let Some(pid) = pid {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let words: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        found.push((format!("{name} command"), words.join(" ")));
        let exe = Path::new("/proc").join(pid.to_string()).join("exe");
        let executable = match (std::fs::read_link(&exe), file_digest(&exe)) {
            (Ok(path), Ok(digest)) => format!("{digest} {}", path.display()),
            (_, Err(e)) | (Err(e), _) => format!("unreadable: {e}"),
        };
        found.push((format!("{name} executable"), executable));
    }
    found
}

/// The named process, or its process group, must hold the socket that
/// listens on the URL's port: else its CPU and memory would be shown beside
/// another program's requests.
fn serves_the_url(
    process: &ProcStat,
    wanted: &ProcessRef,
    attachment: &Attachment,
) -> Result<(), String> {
    let port = attachment.addr.port();
    let mut pids: Vec<i32> = procfs::live_members(process.pgrp)
        .iter()
        .map(|member| member.pid)
        .collect();
    // The tables of the named process's own network namespace come first.
    pids.retain(|&pid| pid != process.pid);
    pids.insert(0, process.pid);
    // Another user's processes cannot be looked into without privilege:
    // then nothing is known, and nothing is refused.
    let Some(ports) = procfs::listening_ports_checked(&pids) else {
        return Ok(());
    };
    if ports.contains(&port) {
        return Ok(());
    }
    let named = match wanted {
        ProcessRef::Pid(pid) => format!("process {pid} ({})", command_name(*pid)),
        ProcessRef::Name(name) => format!("the process named {name:?} (pid {})", process.pid),
    };
    let listens = if ports.is_empty() {
        "listens on no TCP port".to_owned()
    } else {
        let list: Vec<String> = ports.iter().map(u16::to_string).collect();
        format!("listens on port {} instead", list.join(", "))
    };
    Err(format!(
        "{named} is not the server at {}: neither it nor its process group {} listens on \
         port {port}; it {listens}. Give the pid (or process name) of the server that \
         serves {}",
        attachment.url, process.pgrp, attachment.url
    ))
}

/// Where a server refusing `addr` may be instead: on IPv4 when `addr` is
/// IPv6 (a name that resolved to `::1`), or on IPv6 alone.
fn other_family(addr: SocketAddr) -> String {
    let port = addr.port();
    if addr.is_ipv6() {
        return format!(
            "; {} is an IPv6 address: a server that listens on 127.0.0.1 is at \
             \"http://127.0.0.1:{port}\"",
            addr.ip()
        );
    }
    procfs::ipv6_only(port).map_or_else(String::new, |note| {
        format!("; {note}, or give url = \"http://[::1]:{port}\"")
    })
}

fn command_name(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map_or_else(|_| "?".to_owned(), |comm| comm.trim_end().to_owned())
}

fn read_stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    procfs::parse_stat(&text).ok()
}

/// Why the process a spec names was not found.
#[derive(Debug)]
enum Missing {
    /// Nothing runs under that pid or name: the server is not running.
    NotRunning(String),
    /// The name fits processes of several groups: the spec must say which.
    Ambiguous(String),
}

#[cfg(test)]
impl Missing {
    fn message(&self) -> &str {
        match self {
            Self::NotRunning(message) | Self::Ambiguous(message) => message,
        }
    }
}

/// The process the spec names: a live pid, or the one process group whose
/// members carry the name (its leader when the leader is one of them).
fn find_process(wanted: &ProcessRef) -> Result<ProcStat, Missing> {
    match wanted {
        ProcessRef::Pid(pid) => read_stat(*pid).filter(ProcStat::is_live).ok_or_else(|| {
            Missing::NotRunning(format!(
                "no process has pid {pid}: give the pid of the running server"
            ))
        }),
        ProcessRef::Name(name) => by_name(name),
    }
}

fn by_name(name: &str) -> Result<ProcStat, Missing> {
    let own = i32::try_from(std::process::id()).unwrap_or(0);
    let matching: Vec<ProcStat> = std::fs::read_dir("/proc")
        .map_err(|e| Missing::NotRunning(format!("cannot list /proc: {e}")))?
        .filter_map(|entry| procfs::parse_pid(&entry.ok()?.file_name().to_string_lossy()))
        .filter(|&pid| pid != own && is_named(pid, name))
        .filter_map(read_stat)
        .filter(ProcStat::is_live)
        .collect();
    let Some(first) = matching.first() else {
        return Err(Missing::NotRunning(format!(
            "no running process is named {name:?}: start the server first, or give its pid"
        )));
    };
    if matching.iter().any(|p| p.pgrp != first.pgrp) {
        let pids: Vec<String> = matching.iter().map(|p| p.pid.to_string()).collect();
        return Err(Missing::Ambiguous(format!(
            "{} processes in different process groups are named {name:?} (pids {}): give the \
             pid of the server instead",
            matching.len(),
            pids.join(", ")
        )));
    }
    let leader = matching.iter().find(|p| p.pid == p.pgrp).unwrap_or(first);
    Ok(*leader)
}

fn is_named(pid: i32, name: &str) -> bool {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if comm.trim_end() == name {
        return true;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
    Path::new(&*String::from_utf8_lossy(argv0))
        .file_name()
        .is_some_and(|file| file == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_an_address_without_a_path() {
        let addr = Attachment::address_of("http://127.0.0.1:8080").unwrap();
        assert_eq!(addr, "127.0.0.1:8080".parse().unwrap());
        assert!(Attachment::address_of("http://127.0.0.1:8080/").is_ok());
        assert!(Attachment::address_of("https://127.0.0.1:8443").is_ok());
        for (url, says) in [
            ("ftp://127.0.0.1:8080", "http://"),
            ("127.0.0.1:8080", "http://"),
            ("http://127.0.0.1:8080/api", "without a path"),
            ("http://127.0.0.1", "port"),
            ("http://127.0.0.1:", "port"),
            ("http://no-such-host.invalid:80", "does not resolve"),
            (
                "http://user:pw@127.0.0.1:8080/",
                "user info (user:password@), which is not supported: remove it, e.g. \
                 \"http://127.0.0.1:8080\"",
            ),
        ] {
            let error = Attachment::address_of(url).unwrap_err().to_string();
            assert!(error.contains(says), "{url}: {error}");
        }
    }

    #[test]
    fn a_process_is_found_by_pid_or_by_name_and_a_missing_one_is_said() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let by_pid = find_process(&ProcessRef::Pid(pid)).unwrap();
        assert_eq!(by_pid.pid, pid);
        let named = find_process(&ProcessRef::Name("sleep".into()));
        child.kill().unwrap();
        child.wait().unwrap();
        // Another `sleep` of another group may run beside this test.
        if let Ok(found) = named {
            assert_eq!(found.pgrp, by_pid.pgrp);
        }
        let gone = find_process(&ProcessRef::Pid(pid)).unwrap_err();
        let gone = gone.message();
        assert!(
            gone.contains(&format!("no process has pid {pid}")),
            "{gone}"
        );
        let nobody = find_process(&ProcessRef::Name("no-such-server-xyz".into())).unwrap_err();
        let nobody = nobody.message();
        assert!(nobody.contains("no running process is named"), "{nobody}");
    }
}
