//! The raw TOML shape of a manifest (with spans), and its validation into a
//! [`Manifest`]. Every error carries the file, the line and the key.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::{AvailableIf, BuildSpec, MODELS, Manifest, RunSpec};
use crate::error::TargetError;
use crate::parameters::ParameterSpec;
use crate::template::{self, BUILD_PLACEHOLDERS, RUN_PLACEHOLDERS};

/// Environment variables corobench sets itself; `[run].env` may not override them.
const CONTRACT_ENV: &[&str] = &[
    "PORT",
    "TARGET_NAME",
    "DATA_DIR",
    "UPLOAD_DIR",
    "WORK_DIR",
    "DATABASE_URL",
];

type Strings = Spanned<Vec<Spanned<String>>>;
type Env = BTreeMap<String, Spanned<String>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: Spanned<String>,
    model: Spanned<String>,
    summary: String,
    language: String,
    #[serde(default)]
    requires: Vec<Spanned<String>>,
    hint: Option<String>,
    available_if: Option<RawAvailableIf>,
    #[serde(default)]
    versions: Vec<Spanned<Vec<String>>>,
    build: Option<RawBuild>,
    run: RawRun,
    #[serde(default)]
    parameters: BTreeMap<String, Spanned<RawParameter>>,
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
    stop_timeout_s: Option<u64>,
    min_warmup_s: Option<Spanned<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParameter {
    default: toml::Value,
    min: Option<i64>,
    max: Option<i64>,
    choices: Option<Vec<String>>,
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
    check_model(&source, &raw.model)?;
    let parameters = raw
        .parameters
        .into_iter()
        .map(|(name, spec)| Ok((name.clone(), parameter(&source, &name, spec)?)))
        .collect::<Result<BTreeMap<_, _>, TargetError>>()?;
    Ok(Manifest {
        name: raw.name.into_inner(),
        model: raw.model.into_inner(),
        summary: raw.summary,
        language: raw.language,
        requires: requires(&source, raw.requires)?,
        hint: raw.hint.filter(|h| !h.trim().is_empty()),
        available_if: raw
            .available_if
            .map(|a| available_if(&source, a))
            .transpose()?,
        versions: versions(&source, raw.versions)?,
        build: raw.build.map(|b| build(&source, b)).transpose()?,
        run: run(&source, raw.run, &parameters)?,
        parameters,
        dir,
    })
}

fn check_name(source: &Source, name: &Spanned<String>, dir: &Path) -> Result<(), TargetError> {
    let valid = !name.get_ref().is_empty()
        && name
            .get_ref()
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !valid {
        return Err(source.error(
            &name.span(),
            "name",
            "use lower-case letters, digits, '-' and '_'",
        ));
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

fn run(
    source: &Source,
    raw: RawRun,
    parameters: &BTreeMap<String, ParameterSpec>,
) -> Result<RunSpec, TargetError> {
    let known = |name: &str| RUN_PLACEHOLDERS.contains(&name) || parameters.contains_key(name);
    let list = RUN_PLACEHOLDERS
        .iter()
        .map(|s| (*s).to_string())
        .chain(parameters.keys().cloned())
        .collect::<Vec<_>>()
        .join(", ");
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
        stop_timeout_s: raw.stop_timeout_s.unwrap_or(5),
        min_warmup_s,
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
                .map_err(|m| source.error(&arg.span(), format!("{key}[{i}]"), m))?;
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
            template::check(value.get_ref(), known, list).map_err(at)?;
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
    if !template::is_identifier(name) || RUN_PLACEHOLDERS.contains(&name) {
        let builtins = RUN_PLACEHOLDERS.join(", ");
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
                help: raw.help,
            })
        }
        (toml::Value::String(default), Some(choices)) => {
            if raw.min.is_some() || raw.max.is_some() {
                return fail("a parameter with choices takes no min or max".into());
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
