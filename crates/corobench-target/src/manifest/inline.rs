//! `[servers.NAME]` in a spec: a user's own server, described where it is
//! measured instead of in a `target.toml`. Each table becomes a manifest
//! with `contract = false` whose folder is the server's working directory,
//! validated by the same rules as a `target.toml`; an error names the spec
//! and the line of the server's table.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::{MANIFEST_FILE, Manifest};
use crate::attached::{AttachedTls, Attachment, ProcessRef};
use crate::error::TargetError;

/// The keys of `[servers.NAME]`.
pub const SERVER_KEYS: &[&str] = &[
    "command",
    "cwd",
    "env",
    "build",
    "build_exclude",
    "ready",
    "ready_timeout_s",
    "stop_signal",
    "stop_timeout_s",
    "min_warmup_s",
    "version",
    "parameters",
    "protocols",
    "model",
    "summary",
    "requires",
    "hint",
    "url",
    "pid",
    "process",
    "ca",
    "insecure",
];

/// The servers a spec defines itself, in name order; none when the spec
/// has no `[servers]` (or does not parse: the spec's resolver says why).
///
/// # Errors
/// A server table that is not one, a key it may not have, a `cwd` that is
/// not a folder, or anything a `target.toml` would be refused for.
pub fn inline_servers(
    spec_text: &str,
    spec_path: Option<&Path>,
) -> Result<Vec<Manifest>, TargetError> {
    let Ok(document) = spec_text.parse::<Table>() else {
        return Ok(Vec::new());
    };
    let Some(servers) = document.get("servers") else {
        return Ok(Vec::new());
    };
    let spec = Spec {
        path: spec_path.map_or_else(|| PathBuf::from("<spec>"), Path::to_path_buf),
        text: spec_text,
        folder: spec_path
            .and_then(Path::parent)
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
    };
    let Value::Table(servers) = servers else {
        return Err(TargetError::Manifest {
            path: spec.path.clone(),
            line: spec.key_line("servers"),
            key: "servers".to_owned(),
            message: format!(
                "expects a table for each server, [servers.NAME] with its command or url, \
                 found {}; to choose targets by name, write targets = [\"NAME\", …]",
                found(servers)
            ),
        });
    };
    servers
        .iter()
        .map(|(name, table)| spec.server(name, table))
        .collect()
}

/// The spec a server comes from.
struct Spec<'a> {
    path: PathBuf,
    text: &'a str,
    folder: PathBuf,
}

impl Spec<'_> {
    fn server(&self, name: &str, value: &Value) -> Result<Manifest, TargetError> {
        let Value::Table(table) = value else {
            return Err(self.error(&format!("servers.{name}"), Some(name), "must be a table"));
        };
        if !super::is_valid_name(name) {
            let message = format!("{name:?} is no server name: {}", super::NAME_RULE);
            return Err(self.error(&format!("servers.{name}"), Some(name), message));
        }
        if let Some(key) = table.keys().find(|k| !SERVER_KEYS.contains(&k.as_str())) {
            let message = format!("unknown key; a server takes: {}", SERVER_KEYS.join(", "));
            return Err(self.error(&format!("servers.{name}.{key}"), Some(name), message));
        }
        if table.contains_key("url") {
            return self.attached(name, table);
        }
        if let Some(key) = ["pid", "process"].iter().find(|k| table.contains_key(**k)) {
            let message = "is for a server that is already running: give url too";
            return Err(self.error(&format!("servers.{name}.{key}"), Some(name), message));
        }
        let cwd = self.working_dir(name, table)?;
        let text = manifest_text(name, table, &self.path).map_err(|(key, message)| {
            self.error(&format!("servers.{name}.{key}"), Some(name), message)
        })?;
        let stand_in = cwd.join(name).join(MANIFEST_FILE);
        let mut manifest =
            Manifest::parse(&text, &stand_in).map_err(|error| self.rehome(name, error))?;
        manifest.dir = cwd;
        manifest.protocols.undeclared_in_spec(name);
        Ok(manifest)
    }

    /// `cwd`, relative to the spec's folder (the default).
    fn working_dir(&self, name: &str, table: &Table) -> Result<PathBuf, TargetError> {
        let cwd = match table.get("cwd") {
            None => self.folder.clone(),
            Some(Value::String(dir)) => self.folder.join(dir),
            Some(_) => {
                let key = format!("servers.{name}.cwd");
                return Err(self.error(&key, Some(name), "must be a folder, as text"));
            }
        };
        if !cwd.is_dir() {
            let key = format!("servers.{name}.cwd");
            let message = format!("{} is not a folder", cwd.display());
            return Err(self.error(&key, Some(name), message));
        }
        Ok(std::fs::canonicalize(&cwd).unwrap_or(cwd))
    }

    /// A server that is already running at `url`: a manifest that nothing
    /// starts, with only the keys that still apply.
    fn attached(&self, name: &str, table: &Table) -> Result<Manifest, TargetError> {
        let fail = |key: &str, message: String| {
            self.error(&format!("servers.{name}.{key}"), Some(name), message)
        };
        if let Some(key) = table.keys().find(|k| !ATTACHED_KEYS.contains(&k.as_str())) {
            return Err(fail(
                key,
                "does not apply to a server that is already running (url): corobench neither \
                 builds, starts nor stops it; remove the key, or give command instead of url"
                    .to_owned(),
            ));
        }
        let url = match table.get("url") {
            Some(Value::String(url)) => url.clone(),
            _ => {
                return Err(fail(
                    "url",
                    "must be text, e.g. \"http://127.0.0.1:8080\"".into(),
                ));
            }
        };
        let addr = Attachment::address_of(&url).map_err(|e| fail("url", e.to_string()))?;
        let process = attached_process(table).map_err(|(key, m)| fail(key, m.to_owned()))?;
        let tls = attached_tls(&url, table, &self.folder).map_err(|(key, m)| fail(key, m))?;
        let declared_at = match self.table_line(name) {
            Some(line) => format!("{}:{line}", self.path.display()),
            None => self.path.display().to_string(),
        };
        let mut manifest = self.attached_base(name, table)?;
        manifest.attach = Some(Attachment {
            url,
            addr,
            tls,
            process,
            declared_at,
        });
        Ok(manifest)
    }

    /// The manifest of an already running server, through the rules of a
    /// `target.toml` whose command is never run.
    fn attached_base(&self, name: &str, table: &Table) -> Result<Manifest, TargetError> {
        let mut shown = table.clone();
        for key in ["url", "pid", "process", "ca", "insecure"] {
            shown.remove(key);
        }
        shown.insert("command".into(), Value::String("-".into()));
        let text = manifest_text(name, &shown, &self.path).map_err(|(key, message)| {
            self.error(&format!("servers.{name}.{key}"), Some(name), message)
        })?;
        let stand_in = self.folder.join(name).join(MANIFEST_FILE);
        let mut manifest =
            Manifest::parse(&text, &stand_in).map_err(|error| self.rehome(name, error))?;
        manifest.run.command.clear();
        manifest.dir.clone_from(&self.folder);
        manifest.protocols.undeclared_in_spec(name);
        Ok(manifest)
    }

    /// A manifest error of the stand-in `target.toml`, told about the spec.
    fn rehome(&self, name: &str, error: TargetError) -> TargetError {
        match error {
            TargetError::Manifest { key, message, .. } => {
                let key = format!("servers.{name}.{}", key.trim_start_matches("run."));
                self.error(&key, Some(name), message)
            }
            other => other,
        }
    }

    fn error(&self, key: &str, server: Option<&str>, message: impl Into<String>) -> TargetError {
        TargetError::Manifest {
            path: self.path.clone(),
            line: server.and_then(|name| self.table_line(name)),
            key: key.to_owned(),
            message: message.into(),
        }
    }

    /// The line of top-level `key = …` in the spec.
    fn key_line(&self, key: &str) -> Option<usize> {
        let line = self.text.lines().position(|line| {
            line.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })?;
        Some(line + 1)
    }

    /// The line of `[servers.NAME]` in the spec.
    fn table_line(&self, name: &str) -> Option<usize> {
        let headers = [format!("[servers.{name}]"), format!("[servers.\"{name}\"]")];
        self.text
            .lines()
            .position(|line| {
                headers
                    .iter()
                    .any(|h| line.trim_start().starts_with(h.as_str()))
            })
            .map(|index| index + 1)
    }
}

/// What a value is, for "found …".
fn found(value: &Value) -> String {
    match value {
        Value::String(text) => format!("the text {text:?}"),
        Value::Integer(n) => format!("the integer {n}"),
        Value::Float(x) => format!("the number {x}"),
        Value::Boolean(b) => format!("`{b}`"),
        Value::Datetime(at) => format!("the date {at}"),
        Value::Array(_) => "a list".to_owned(),
        Value::Table(_) => "a table".to_owned(),
    }
}

/// The keys a server that is already running may have.
const ATTACHED_KEYS: &[&str] = &[
    "url",
    "pid",
    "process",
    "ca",
    "insecure",
    "protocols",
    "version",
    "min_warmup_s",
    "model",
    "summary",
    "requires",
    "hint",
];

/// How an `https://` server's certificate is trusted: `ca` (a PEM file,
/// relative to the spec) or `insecure = true`; either is refused with an
/// `http://` URL, where it would silently do nothing.
fn attached_tls(
    url: &str,
    table: &Table,
    folder: &Path,
) -> Result<Option<AttachedTls>, (&'static str, String)> {
    let ca = match table.get("ca") {
        None => None,
        Some(Value::String(path)) if !path.trim().is_empty() => Some(folder.join(path.trim())),
        Some(_) => return Err(("ca", "must be the path of a PEM file, as text".to_owned())),
    };
    let insecure = match table.get("insecure") {
        None => false,
        Some(Value::Boolean(on)) => *on,
        Some(_) => return Err(("insecure", "must be true or false".to_owned())),
    };
    if !url.starts_with("https://") {
        if let Some(key) = ["ca", "insecure"]
            .into_iter()
            .find(|k| table.contains_key(*k))
        {
            return Err((
                key,
                format!("applies to an https:// url only, and url is {url}"),
            ));
        }
        return Ok(None);
    }
    if let Some(path) = &ca
        && !path.is_file()
    {
        let message = format!(
            "{} is not a file: give the PEM file of the CA that signed the server's certificate",
            path.display()
        );
        return Err(("ca", message));
    }
    Ok(Some(AttachedTls { ca, insecure }))
}

/// `pid` or `process`: which process group is sampled.
fn attached_process(table: &Table) -> Result<Option<ProcessRef>, (&'static str, &'static str)> {
    match (table.get("pid"), table.get("process")) {
        (Some(_), Some(_)) => Err(("process", "give pid or process, not both")),
        (Some(Value::Integer(pid)), None) => i32::try_from(*pid)
            .ok()
            .filter(|pid| *pid > 0)
            .map(|pid| Some(ProcessRef::Pid(pid)))
            .ok_or(("pid", "must be a process id, a positive whole number")),
        (Some(_), None) => Err(("pid", "must be a process id, a positive whole number")),
        (None, Some(Value::String(name))) if !name.trim().is_empty() => {
            Ok(Some(ProcessRef::Name(name.trim().to_owned())))
        }
        (None, Some(_)) => Err(("process", "must be the process's name, as text")),
        (None, None) => Ok(None),
    }
}

/// The `target.toml` a server table stands for, or the key at fault.
fn manifest_text(name: &str, table: &Table, spec: &Path) -> Result<String, (String, String)> {
    let mut manifest = Table::new();
    manifest.insert("name".into(), Value::String(name.to_owned()));
    manifest.insert("contract".into(), Value::Boolean(false));
    let summary = format!("a server defined in {}", spec.display());
    manifest.insert(
        "summary".into(),
        table
            .get("summary")
            .cloned()
            .unwrap_or(Value::String(summary)),
    );
    for key in ["model", "requires", "hint"] {
        if let Some(value) = table.get(key) {
            manifest.insert(key.into(), value.clone());
        }
    }
    if let Some(version) = table.get("version") {
        manifest.insert(
            "versions".into(),
            Value::Array(vec![command_value("version", version)?]),
        );
    }
    if let Some(build) = table.get("build") {
        let mut section = Table::new();
        section.insert("command".into(), command_value("build", build)?);
        if let Some(exclude) = table.get("build_exclude") {
            section.insert("exclude".into(), exclude.clone());
        }
        manifest.insert("build".into(), Value::Table(section));
    }
    let mut run = Table::new();
    let command = table.get("command").ok_or_else(|| {
        (
            "command".to_owned(),
            "missing: how to start the server, e.g. command = \"./api --port {port}\"".to_owned(),
        )
    })?;
    run.insert("command".into(), command_value("command", command)?);
    for key in [
        "env",
        "ready",
        "ready_timeout_s",
        "stop_signal",
        "stop_timeout_s",
        "min_warmup_s",
    ] {
        if let Some(value) = table.get(key) {
            run.insert(key.into(), value.clone());
        }
    }
    manifest.insert("run".into(), Value::Table(run));
    for key in ["parameters", "protocols"] {
        if let Some(value) = table.get(key) {
            manifest.insert(key.into(), value.clone());
        }
    }
    toml::to_string(&manifest).map_err(|e| ("command".to_owned(), e.to_string()))
}

/// A command given as a list of words, or as one line split at spaces.
fn command_value(key: &str, value: &Value) -> Result<Value, (String, String)> {
    match value {
        Value::Array(_) => Ok(value.clone()),
        Value::String(line) if line.contains(['"', '\'', '\\']) => Err((
            key.to_owned(),
            "a command line with quotes or backslashes is ambiguous: give it as a list of words, \
             e.g. [\"./api\", \"--name\", \"a b\"]"
                .to_owned(),
        )),
        Value::String(line) => Ok(Value::Array(
            line.split_whitespace()
                .map(|w| Value::String(w.to_owned()))
                .collect(),
        )),
        _ => Err((
            key.to_owned(),
            "must be a command: a line of text or a list of words".to_owned(),
        )),
    }
}
