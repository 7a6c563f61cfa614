//! The raw TOML shape of a manifest (with spans), and its validation into a
//! [`Manifest`]. Every error carries the file, the line and the key.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::protocols::{self, Protocols, RawProtocols};
use super::{
    AvailableIf, BuildSpec, MODELS, Manifest, ProgramServer, ProgramSpec, Readiness, RunSpec,
    StopSignal, TargetKind,
};
use crate::error::TargetError;
use crate::parameters::ParameterSpec;
use crate::template::{
    self, BUILD_PLACEHOLDERS, PROGRAM_PLACEHOLDERS, RUN_PLACEHOLDERS, SERVER_URL,
};

/// Environment variables corobench sets itself; `[run].env` may not override them.
const CONTRACT_ENV: &[&str] = &[
    "PORT",
    "TARGET_NAME",
    "DATA_DIR",
    "UPLOAD_DIR",
    "WORK_DIR",
    "DATABASE_URL",
    "HTTP_PROTOCOL",
    "TLS_CERT",
    "TLS_KEY",
];

type Strings = Spanned<Vec<Spanned<String>>>;
type Env = BTreeMap<String, Spanned<String>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: Spanned<String>,
    model: Option<Spanned<String>>,
    #[serde(default)]
    summary: String,
    #[serde(default)]
    language: String,
    contract: Option<bool>,
    kind: Option<Spanned<RawKind>>,
    #[serde(default)]
    requires: Vec<Spanned<String>>,
    hint: Option<String>,
    available_if: Option<RawAvailableIf>,
    #[serde(default)]
    versions: Vec<Spanned<Vec<String>>>,
    build: Option<RawBuild>,
    run: RawRun,
    program: Option<Spanned<RawProgram>>,
    #[serde(default)]
    parameters: BTreeMap<String, Spanned<RawParameter>>,
    protocols: Option<Spanned<RawProtocols>>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum RawKind {
    Server,
    Program,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProgram {
    server: ProgramServer,
    metrics: Strings,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAvailableIf {
    command: Spanned<Vec<String>>,
    #[serde(default)]
    stdout_contains: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBuild {
    command: Strings,
    #[serde(default)]
    exclude: Vec<String>,
    #[serde(default)]
    inputs: Vec<Spanned<String>>,
    #[serde(default)]
    env: Env,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    command: Strings,
    #[serde(default)]
    env: Env,
    ready_timeout_s: Option<Spanned<u64>>,
    ready: Option<Spanned<String>>,
    stop_signal: Option<Spanned<String>>,
    stop_timeout_s: Option<u64>,
    min_warmup_s: Option<Spanned<u64>>,
    time_limit_s: Option<Spanned<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParameter {
    default: toml::Value,
    min: Option<i64>,
    max: Option<i64>,
    choices: Option<Vec<String>>,
    /// Another integer parameter this one may not be below.
    at_least: Option<String>,
    #[serde(default)]
    help: String,
}

/// The file being validated, to turn spans into line numbers.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn line(&self, span: &Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text[..end].matches('\n').count() + 1
    }

    fn error(
        &self,
        span: &Range<usize>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> TargetError {
        TargetError::Manifest {
            path: self.path.to_path_buf(),
            line: Some(self.line(span)),
            key: key.into(),
            message: message.into(),
        }
    }

    /// A TOML syntax or shape error; the key is the one the message quotes,
    /// else the one on the offending line.
    fn toml_error(&self, error: &toml::de::Error) -> TargetError {
        let span = error.span().unwrap_or(0..0);
        let line_text = self.text.lines().nth(self.line(&span) - 1).unwrap_or("");
        let message = error.message();
        let quoted = ["field `", "key `"]
            .iter()
            .find_map(|intro| message.split_once(intro))
            .and_then(|(_, rest)| rest.split('`').next())
            .filter(|k| !k.is_empty());
        let key = quoted.map_or_else(
            || line_text.split('=').next().unwrap_or("").trim().to_string(),
            str::to_string,
        );
        self.error(&span, key, message.trim())
    }
}

pub(super) fn parse(text: &str, path: &Path) -> Result<Manifest, TargetError> {
    let source = Source { path, text };
    let raw: RawManifest = toml::from_str(text).map_err(|e| source.toml_error(&e))?;
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    check_name(&source, &raw.name, &dir)?;
    let contract = raw.contract.unwrap_or(true);
    let model = model(&source, raw.model, contract)?;
    let parameters = raw
        .parameters
        .into_iter()
        .map(|(name, spec)| Ok((name.clone(), parameter(&source, &name, spec)?)))
        .collect::<Result<BTreeMap<_, _>, TargetError>>()?;
    check_floors(&source, &parameters)?;
    let kind = target_kind(&source, raw.kind, raw.program, &raw.run)?;
    let run = run(&source, raw.run, &parameters, &kind, contract)?;
    let protocols = declared_protocols(&source, raw.protocols, &kind)?;
    Ok(Manifest {
        name: raw.name.into_inner(),
        model,
        contract,
        summary: raw.summary,
        language: raw.language,
        kind,
        requires: requires(&source, raw.requires)?,
        hint: raw.hint.filter(|h| !h.trim().is_empty()),
        available_if: raw
            .available_if
            .map(|a| available_if(&source, a))
            .transpose()?,
        versions: versions(&source, raw.versions)?,
        build: raw.build.map(|b| build(&source, b)).transpose()?,
        run,
        parameters,
        protocols,
        dir,
        attach: None,
    })
}

/// `[protocols]`, for servers only: a program speaks to no client.
fn declared_protocols(
    source: &Source,
    raw: Option<Spanned<RawProtocols>>,
    kind: &TargetKind,
) -> Result<Protocols, TargetError> {
    let Some(raw) = raw else {
        return Ok(Protocols::default());
    };
    if matches!(kind, TargetKind::Program(_)) {
        let message = "a program serves nothing, so it declares no protocols: remove the table";
        return Err(source.error(&raw.span(), "protocols", message));
    }
    let span = raw.span();
    protocols::protocols(raw.into_inner(), span)
        .map_err(|e| source.error(&e.span, e.key, e.message))
}

/// `at_least` names another integer parameter, and the defaults keep it.
fn check_floors(
    source: &Source,
    parameters: &BTreeMap<String, ParameterSpec>,
) -> Result<(), TargetError> {
    for (name, spec) in parameters {
        let ParameterSpec::Integer {
            at_least: Some(floor),
            default,
            ..
        } = spec
        else {
            continue;
        };
        let fail = |message: String| {
            Err(source.error(&(0..0), format!("parameters.{name}.at_least"), message))
        };
        match parameters.get(floor) {
            Some(ParameterSpec::Integer { default: least, .. }) if floor != name => {
                if default < least {
                    return fail(format!(
                        "default {default} is below the default of {floor} ({least})"
                    ));
                }
            }
            _ => return fail(format!("{floor:?} is not another integer parameter")),
        }
    }
    Ok(())
}

/// What a target's (or a user's server's) name may hold: one rule for
/// manifests, specs and the quick form's `--server NAME=…`.
pub const NAME_RULE: &str = "use lower-case letters, digits, '-' and '_'";

/// Whether `name` follows [`NAME_RULE`].
#[must_use]
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn check_name(source: &Source, name: &Spanned<String>, dir: &Path) -> Result<(), TargetError> {
    if !is_valid_name(name.get_ref()) {
        return Err(source.error(&name.span(), "name", NAME_RULE));
    }
    let folder = dir
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    if *name.get_ref() != folder {
        let message = format!("{:?} must equal the folder name {folder:?}", name.get_ref());
        return Err(source.error(&name.span(), "name", message));
    }
    Ok(())
}

/// A contract target names its concurrency model; a user's server may, in
/// its own words, and is `user-server` otherwise.
fn model(
    source: &Source,
    raw: Option<Spanned<String>>,
    contract: bool,
) -> Result<String, TargetError> {
    match raw {
        Some(model) if contract => check_model(source, &model).map(|()| model.into_inner()),
        Some(model) => Ok(model.into_inner()),
        None if contract => Err(source.error(
            &(0..0),
            "model",
            format!(
                "missing: a contract target names its concurrency model, one of: {}",
                MODELS.join(", ")
            ),
        )),
        None => Ok("user-server".to_owned()),
    }
}

fn check_model(source: &Source, model: &Spanned<String>) -> Result<(), TargetError> {
    if MODELS.contains(&model.get_ref().as_str()) {
        return Ok(());
    }
    let message = format!(
        "{:?} is not a model id; use one of {}",
        model.get_ref(),
        MODELS.join(", ")
    );
    Err(source.error(&model.span(), "model", message))
}

fn requires(source: &Source, raw: Vec<Spanned<String>>) -> Result<Vec<String>, TargetError> {
    raw.into_iter()
        .map(|command| {
            if command.get_ref().trim().is_empty()
                || command.get_ref().contains(char::is_whitespace)
            {
                let message = format!("{:?} is not a command name", command.get_ref());
                return Err(source.error(&command.span(), "requires", message));
            }
            Ok(command.into_inner())
        })
        .collect()
}

fn available_if(source: &Source, raw: RawAvailableIf) -> Result<AvailableIf, TargetError> {
    non_empty(source, &raw.command, "available_if.command")?;
    Ok(AvailableIf {
        command: raw.command.into_inner(),
        stdout_contains: raw.stdout_contains,
    })
}

fn versions(
    source: &Source,
    raw: Vec<Spanned<Vec<String>>>,
) -> Result<Vec<Vec<String>>, TargetError> {
    raw.into_iter()
        .map(|command| {
            non_empty(source, &command, "versions")?;
            Ok(command.into_inner())
        })
        .collect()
}

fn non_empty<T>(source: &Source, command: &Spanned<Vec<T>>, key: &str) -> Result<(), TargetError> {
    if command.get_ref().is_empty() {
        return Err(source.error(
            &command.span(),
            key,
            "a command needs at least the program name",
        ));
    }
    Ok(())
}

fn build(source: &Source, raw: RawBuild) -> Result<BuildSpec, TargetError> {
    let known = |name: &str| BUILD_PLACEHOLDERS.contains(&name);
    let list = BUILD_PLACEHOLDERS.join(", ");
    let command = command(source, raw.command, "build.command", &known, &list)?;
    let env = env(source, raw.env, "build.env", &known, &list)?;
    let inputs = raw
        .inputs
        .into_iter()
        .map(|input| {
            let path = PathBuf::from(input.get_ref());
            if path.is_absolute() || input.get_ref().is_empty() {
                let message = format!(
                    "{:?} must be a path relative to the target's folder",
                    input.get_ref()
                );
                return Err(source.error(&input.span(), "build.inputs", message));
            }
            Ok(path)
        })
        .collect::<Result<_, _>>()?;
    Ok(BuildSpec {
        command,
        exclude: raw.exclude,
        inputs,
        env,
    })
}

/// A warm-up longer than this is a mistake, not a runtime's need.
const MAX_MIN_WARMUP_S: u64 = 120;
/// A program's time limit when its manifest names none.
const DEFAULT_TIME_LIMIT_S: u64 = 300;
/// A program that needs longer than an hour is a benchmark gone wrong.
const MAX_TIME_LIMIT_S: u64 = 3600;

/// `kind`, `[program]` and the `[run]` keys that only make sense for one
/// kind. Such keys are refused rather than ignored, so that a manifest never
/// promises what corobench does not do.
fn target_kind(
    source: &Source,
    kind: Option<Spanned<RawKind>>,
    program: Option<Spanned<RawProgram>>,
    run: &RawRun,
) -> Result<TargetKind, TargetError> {
    let Some(kind) = kind.filter(|k| *k.get_ref() == RawKind::Program) else {
        let message = "[program] is only for kind = \"program\": add that, or remove the table";
        refuse(source, program.as_ref(), "program", message)?;
        let message = "only a program has a time limit: a server runs until corobench stops it";
        refuse(
            source,
            run.time_limit_s.as_ref(),
            "run.time_limit_s",
            message,
        )?;
        return Ok(TargetKind::Server);
    };
    let Some(program) = program else {
        let message = "a program needs a [program] table with server and metrics";
        return Err(source.error(&kind.span(), "kind", message));
    };
    let message = "a program has no health check to wait for: remove it";
    refuse(
        source,
        run.ready_timeout_s.as_ref(),
        "run.ready_timeout_s",
        message,
    )?;
    let message = "a program warms up on its own before it measures: remove it";
    refuse(
        source,
        run.min_warmup_s.as_ref(),
        "run.min_warmup_s",
        message,
    )?;
    let program = program.into_inner();
    Ok(TargetKind::Program(ProgramSpec {
        server: program.server,
        metrics: metrics(source, program.metrics)?,
        time_limit_s: time_limit(source, run.time_limit_s.as_ref())?,
    }))
}

/// An error at `value` when it is present: for keys that make no sense here.
fn refuse<T>(
    source: &Source,
    value: Option<&Spanned<T>>,
    key: &str,
    message: &str,
) -> Result<(), TargetError> {
    match value {
        Some(value) => Err(source.error(&value.span(), key, message)),
        None => Ok(()),
    }
}

/// The units every result line must carry: one word each, as Go prints them.
fn metrics(source: &Source, raw: Strings) -> Result<Vec<String>, TargetError> {
    if raw.get_ref().is_empty() {
        return Err(source.error(
            &raw.span(),
            "program.metrics",
            "name at least one unit that every result line carries, e.g. [\"req/s\"]",
        ));
    }
    let mut seen = BTreeSet::new();
    raw.into_inner()
        .into_iter()
        .map(|unit| {
            let at = |message: String| source.error(&unit.span(), "program.metrics", message);
            if unit.get_ref().is_empty() || unit.get_ref().contains(char::is_whitespace) {
                return Err(at(format!(
                    "{:?} is not a unit: a unit is one word without spaces (req/s, p99-ms)",
                    unit.get_ref()
                )));
            }
            if !seen.insert(unit.get_ref().clone()) {
                return Err(at(format!("{:?} is listed twice", unit.get_ref())));
            }
            Ok(unit.into_inner())
        })
        .collect()
}

fn time_limit(source: &Source, raw: Option<&Spanned<u64>>) -> Result<u64, TargetError> {
    match raw {
        None => Ok(DEFAULT_TIME_LIMIT_S),
        Some(limit) if (1..=MAX_TIME_LIMIT_S).contains(limit.get_ref()) => Ok(*limit.get_ref()),
        Some(limit) => Err(source.error(
            &limit.span(),
            "run.time_limit_s",
            format!("must be between 1 and {MAX_TIME_LIMIT_S} seconds"),
        )),
    }
}

/// The placeholders `[run]` may use: the built-in ones of the target's kind,
/// then its parameters.
fn run_placeholders(
    kind: &TargetKind,
    parameters: &BTreeMap<String, ParameterSpec>,
) -> Vec<String> {
    let builtins: Vec<&str> = match kind {
        TargetKind::Server => RUN_PLACEHOLDERS.to_vec(),
        TargetKind::Program(spec) => PROGRAM_PLACEHOLDERS
            .iter()
            .copied()
            .filter(|name| spec.needs_server() || *name != SERVER_URL)
            .collect(),
    };
    builtins
        .into_iter()
        .map(str::to_string)
        .chain(parameters.keys().cloned())
        .collect()
}

/// `{server_url}` where no server URL exists gets its own message: "unknown
/// placeholder" would not say how to get one.
fn refuse_misplaced_server_url(
    source: &Source,
    raw: &RawRun,
    kind: &TargetKind,
) -> Result<(), TargetError> {
    let message = match kind {
        TargetKind::Program(spec) if spec.needs_server() => return Ok(()),
        TargetKind::Program(_) => "{server_url} needs [program] server = \"required\"",
        TargetKind::Server => {
            "{server_url} is for programs (kind = \"program\"); a server has none to use"
        }
    };
    let args = raw.command.get_ref().iter().enumerate();
    let args = args.map(|(i, arg)| (format!("run.command[{i}]"), arg));
    let env = raw
        .env
        .iter()
        .map(|(name, value)| (format!("run.env.{name}"), value));
    match args
        .chain(env)
        .find(|(_, value)| template::mentions(value.get_ref(), SERVER_URL))
    {
        Some((key, value)) => Err(source.error(&value.span(), key, message)),
        None => Ok(()),
    }
}

fn run(
    source: &Source,
    raw: RawRun,
    parameters: &BTreeMap<String, ParameterSpec>,
    kind: &TargetKind,
    contract: bool,
) -> Result<RunSpec, TargetError> {
    refuse_misplaced_server_url(source, &raw, kind)?;
    let names = run_placeholders(kind, parameters);
    let known = |name: &str| names.iter().any(|known| known == name);
    let list = names.join(", ");
    let command = command(source, raw.command, "run.command", &known, &list)?;
    if let Some((key, value)) = raw
        .env
        .iter()
        .find(|(key, _)| CONTRACT_ENV.contains(&key.as_str()))
    {
        let message =
            format!("corobench sets {key} itself (the contract's environment); remove it");
        return Err(source.error(&value.span(), format!("run.env.{key}"), message));
    }
    let env = env(source, raw.env, "run.env", &known, &list)?;
    let ready_timeout_s = match raw.ready_timeout_s {
        Some(timeout) if *timeout.get_ref() == 0 => {
            return Err(source.error(
                &timeout.span(),
                "run.ready_timeout_s",
                "must be at least 1 second",
            ));
        }
        Some(timeout) => timeout.into_inner(),
        None => 30,
    };
    let min_warmup_s = match raw.min_warmup_s {
        Some(warmup) if *warmup.get_ref() > MAX_MIN_WARMUP_S => {
            return Err(source.error(
                &warmup.span(),
                "run.min_warmup_s",
                format!("must be at most {MAX_MIN_WARMUP_S} seconds"),
            ));
        }
        Some(warmup) => warmup.into_inner(),
        None => 0,
    };
    Ok(RunSpec {
        command,
        env,
        ready_timeout_s,
        ready: readiness(source, raw.ready, contract)?,
        stop_signal: stop_signal(source, raw.stop_signal)?,
        stop_timeout_s: raw.stop_timeout_s.unwrap_or(5),
        min_warmup_s,
    })
}

/// `ready = "/path"` or `"port"`; a contract target answers `/healthz`,
/// a user's server is ready once its port accepts a connection.
fn readiness(
    source: &Source,
    raw: Option<Spanned<String>>,
    contract: bool,
) -> Result<Readiness, TargetError> {
    let Some(ready) = raw else {
        return Ok(if contract {
            Readiness::Http("/healthz".to_owned())
        } else {
            Readiness::Port
        });
    };
    let text = ready.get_ref().trim();
    if text == "port" {
        return Ok(Readiness::Port);
    }
    let valid = text.starts_with('/') && !text.chars().any(|c| c.is_whitespace() || c.is_control());
    if valid {
        return Ok(Readiness::Http(text.to_owned()));
    }
    Err(source.error(
        &ready.span(),
        "run.ready",
        format!(
            "{text:?} is neither a path (\"/health\", answered 2xx when ready) nor \"port\" \
             (ready once the port accepts a connection)"
        ),
    ))
}

fn stop_signal(source: &Source, raw: Option<Spanned<String>>) -> Result<StopSignal, TargetError> {
    let Some(name) = raw else {
        return Ok(StopSignal::Term);
    };
    StopSignal::NAMES
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name.get_ref().trim()))
        .map(|(_, signal)| *signal)
        .ok_or_else(|| {
            let names: Vec<&str> = StopSignal::NAMES.iter().map(|(n, _)| *n).collect();
            source.error(
                &name.span(),
                "run.stop_signal",
                format!("{:?}: use one of {}", name.get_ref(), names.join(", ")),
            )
        })
}

fn command(
    source: &Source,
    raw: Strings,
    key: &str,
    known: &dyn Fn(&str) -> bool,
    list: &str,
) -> Result<Vec<String>, TargetError> {
    non_empty(source, &raw, key)?;
    raw.into_inner()
        .into_iter()
        .enumerate()
        .map(|(i, arg)| {
            template::check(arg.get_ref(), known, list)
                .map_err(|e| source.error(&arg.span(), format!("{key}[{i}]"), e.to_string()))?;
            Ok(arg.into_inner())
        })
        .collect()
}

fn env(
    source: &Source,
    raw: Env,
    key: &str,
    known: &dyn Fn(&str) -> bool,
    list: &str,
) -> Result<BTreeMap<String, String>, TargetError> {
    raw.into_iter()
        .map(|(name, value)| {
            let at = |m: String| source.error(&value.span(), format!("{key}.{name}"), m);
            if name.is_empty() || name.contains(['=', '\0']) {
                return Err(at(format!("{name:?} is not an environment variable name")));
            }
            template::check(value.get_ref(), known, list).map_err(|e| at(e.to_string()))?;
            Ok((name, value.into_inner()))
        })
        .collect()
}

fn parameter(
    source: &Source,
    name: &str,
    raw: Spanned<RawParameter>,
) -> Result<ParameterSpec, TargetError> {
    let span = raw.span();
    let key = format!("parameters.{name}");
    let fail = |message: String| Err(source.error(&span, key.clone(), message));
    let reserved: BTreeSet<&str> = RUN_PLACEHOLDERS
        .iter()
        .chain(PROGRAM_PLACEHOLDERS)
        .copied()
        .collect();
    if !template::is_identifier(name) || reserved.contains(name) {
        let builtins = reserved.into_iter().collect::<Vec<_>>().join(", ");
        return fail(format!(
            "{name:?} cannot name a parameter: use letters, digits and _, none of {builtins}"
        ));
    }
    let raw = raw.into_inner();
    match (raw.default, raw.choices) {
        (toml::Value::Integer(default), None) => {
            let (Some(min), Some(max)) = (raw.min, raw.max) else {
                return fail("an integer parameter needs both min and max".into());
            };
            if min > max || !(min..=max).contains(&default) {
                return fail(format!(
                    "default {default} must lie in min..=max ({min}..={max})"
                ));
            }
            Ok(ParameterSpec::Integer {
                default,
                min,
                max,
                at_least: raw.at_least,
                help: raw.help,
            })
        }
        (toml::Value::String(default), Some(choices)) => {
            if raw.min.is_some() || raw.max.is_some() || raw.at_least.is_some() {
                return fail("a parameter with choices takes no min, max or at_least".into());
            }
            if !choices.contains(&default) {
                return fail(format!(
                    "default {default:?} must be one of the choices ({})",
                    choices.join(", ")
                ));
            }
            Ok(ParameterSpec::Choice {
                default,
                choices,
                help: raw.help,
            })
        }
        (toml::Value::String(_), None) => fail("a string parameter needs choices = [...]".into()),
        (toml::Value::Integer(_), Some(_)) => {
            fail("choices are strings: the default must be one of them".into())
        }
        (other, _) => fail(format!(
            "default must be an integer or a string, not a {}",
            other.type_str()
        )),
    }
}
