//! The suite's `name` and `description`, and `[run]`: how every trial runs.

pub use corobench_model::PrecisionGoal;
use std::ops::{Range, RangeInclusive};
use std::time::Duration;

use corobench_model::BackendChoice;
use toml::de::DeValue;

use crate::catalog::Catalog;
use crate::defaults::{DEFAULT_DURATION, DEFAULT_TRIALS, DEFAULT_WARMUP};
use crate::document::{self, Field, Table, Value};
use crate::error::{Locator, SpecError, shown};
use crate::keys;
use crate::limits::{MAX_DURATION, MAX_GENERATOR_THREADS, MAX_TRIALS};
use crate::plan::{DEFAULT_BUDGET_GOAL, MIN_TRIALS_FOR_INTERVAL, Measurement, Trials};
use crate::values::{parse_cpu_list, parse_duration, parse_fraction};

/// The longest suite name; it heads every report.
const MAX_NAME_CHARS: usize = 128;
/// The longest description: one line for people.
const MAX_DESCRIPTION_CHARS: usize = 1_000;

/// `[run]` with its defaults filled in.
#[derive(Debug)]
pub(super) struct Settings {
    pub trials: Trials,
    pub seed: u64,
    pub machine_probe: bool,
    pub server_cpus: Vec<usize>,
    pub generator_cpus: Vec<usize>,
    pub measurement: Measurement,
    /// `profile`: one extra, unmeasured trial per scenario under `perf record`.
    pub profile: bool,
    /// Where `generator_threads` is set (where `[run]` is, or nothing, if not).
    pub threads_span: Range<usize>,
}

pub(super) fn name(
    field: Option<&Field<'_>>,
    at: &Locator<'_>,
) -> Result<Option<String>, SpecError> {
    let Some(field) = field else { return Ok(None) };
    let name = one_line(field, "\"my-suite\"", MAX_NAME_CHARS, at)?;
    if name.trim().is_empty() {
        return Err(at.at(
            field.value.span(),
            "name",
            "is empty: name the suite, e.g. name = \"io-sweep\"",
        ));
    }
    Ok(Some(name.to_string()))
}

pub(super) fn description(
    field: Option<&Field<'_>>,
    at: &Locator<'_>,
) -> Result<Option<String>, SpecError> {
    field
        .map(|f| {
            one_line(f, "\"what this suite compares\"", MAX_DESCRIPTION_CHARS, at)
                .map(str::to_string)
        })
        .transpose()
}

/// Text shown on one line of a terminal: no control characters (which could
/// move the cursor or forge lines), not too long.
pub(super) fn one_line<'d>(
    field: &Field<'d>,
    example: &str,
    most: usize,
    at: &Locator<'_>,
) -> Result<&'d str, SpecError> {
    let text = document::text(field.value, &field.path, example, at)?;
    if text.chars().any(char::is_control) {
        let message = "contains a control character (a line break, tab or escape); write it on one line of plain text";
        return Err(at.at(field.value.span(), &field.path, message));
    }
    if text.chars().count() > most {
        let message = format!("is longer than {most} characters; shorten it");
        return Err(at.at(field.value.span(), &field.path, message));
    }
    Ok(text)
}

pub(super) fn read(
    field: Option<&Field<'_>>,
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<Settings, SpecError> {
    let table = match field {
        Some(field) => Table::read(field.value, "run", keys::RUN, at)?,
        None => Table {
            path: "run".into(),
            span: at.end(),
            fields: Vec::new(),
        },
    };
    let run = Run { table: &table, at };
    let (server_cpus, generator_cpus) = cpu_sets(&table, catalog, at)?;
    let budget = run
        .get("budget")
        .is_some()
        .then(|| run.duration("budget", Duration::ZERO, false))
        .transpose()?;
    // A budgeted run chooses by interval width, so it needs bounded
    // intervals first, and a goal to stop at.
    let trials = match budget {
        Some(_) => run
            .count("trials", MIN_TRIALS_FOR_INTERVAL, 1..=MAX_TRIALS)?
            .max(MIN_TRIALS_FOR_INTERVAL),
        None => run.count("trials", DEFAULT_TRIALS, 1..=MAX_TRIALS)?,
    };
    let until_ci = match run
        .get("until_ci")
        .map(|v| fraction(v, "run.until_ci", at))
        .transpose()?
    {
        None if budget.is_some() => Some(DEFAULT_BUDGET_GOAL),
        given => given,
    };
    let max = run.count("max_trials", trials.max(20), trials..=MAX_TRIALS)?;
    let default_threads = u32::try_from(generator_cpus.len()).unwrap_or(1);
    let measurement = Measurement {
        duration: run.duration("duration", DEFAULT_DURATION, false)?,
        warmup: run.duration("warmup", DEFAULT_WARMUP, true)?,
        idle: run.duration("idle", Duration::from_secs(1), true)?,
        timeout: run.duration("timeout", Duration::from_secs(10), false)?,
        generator_threads: run.count(
            "generator_threads",
            default_threads,
            1..=MAX_GENERATOR_THREADS,
        )?,
        backend: run
            .get("backend")
            .map_or(Ok(BackendChoice::Auto), |v| backend(v, at))?,
    };
    let seed = match run.get("seed") {
        None => 1,
        Some(value) => {
            u64::try_from(document::integer(value, "run.seed", 0..=i64::MAX, at)?).unwrap_or(1)
        }
    };
    let machine_probe = run
        .get("machine_probe")
        .map_or(Ok(true), |v| document::boolean(v, "run.machine_probe", at))?;
    Ok(Settings {
        trials: Trials {
            min: trials,
            until_ci,
            max,
            budget,
        },
        seed,
        machine_probe,
        server_cpus,
        generator_cpus,
        measurement,
        profile: run
            .get("profile")
            .map_or(Ok(false), |v| document::boolean(v, "run.profile", at))?,
        threads_span: run
            .get("generator_threads")
            .map_or(table.span.clone(), Value::span),
    })
}

/// `[run]`'s values, each read with its default when absent.
struct Run<'t, 'd> {
    table: &'t Table<'d>,
    at: &'t Locator<'t>,
}

impl<'d> Run<'_, 'd> {
    fn get(&self, name: &str) -> Option<&'d Value<'d>> {
        self.table.get(name).map(|f| f.value)
    }

    /// A count within `allowed`.
    fn count(
        &self,
        name: &str,
        default: u32,
        allowed: RangeInclusive<u32>,
    ) -> Result<u32, SpecError> {
        let Some(value) = self.get(name) else {
            return Ok(default);
        };
        let (lowest, most) = (i64::from(*allowed.start()), i64::from(*allowed.end()));
        let n = document::integer(value, &format!("run.{name}"), lowest..=most, self.at)?;
        Ok(u32::try_from(n).unwrap_or(*allowed.end()))
    }

    /// `"10s"`, `"500ms"`, or a number of seconds, up to [`MAX_DURATION`].
    fn duration(
        &self,
        name: &str,
        default: Duration,
        zero_ok: bool,
    ) -> Result<Duration, SpecError> {
        let Some(value) = self.get(name) else {
            return Ok(default);
        };
        let (key, at) = (format!("run.{name}"), self.at);
        let parsed = match value.get_ref() {
            DeValue::String(text) => {
                parse_duration(text).map_err(|why| at.at(value.span(), &key, why))?
            }
            DeValue::Integer(_) | DeValue::Float(_) => {
                let seconds = (0.0..=MAX_DURATION.as_secs_f64(), "seconds");
                Duration::from_secs_f64(document::number(value, &key, seconds, at)?)
            }
            _ => {
                let expected = "a duration such as \"10s\" or \"500ms\"";
                return Err(document::mismatch(value, &key, expected, at));
            }
        };
        if parsed > MAX_DURATION {
            let message = format!(
                "{} is longer than a spec allows: use at most \"{}h\"",
                document::shown_source(value, at),
                MAX_DURATION.as_secs() / 3600
            );
            return Err(at.at(value.span(), key, message));
        }
        if parsed.is_zero() && !zero_ok {
            return Err(at.at(value.span(), key, "must be longer than 0, e.g. \"10s\""));
        }
        Ok(parsed)
    }
}

/// `"3%"` or `0.03`: a fraction in (0, 1).
pub(super) fn fraction(value: &Value<'_>, key: &str, at: &Locator<'_>) -> Result<f64, SpecError> {
    let parsed = match value.get_ref() {
        DeValue::String(text) => parse_fraction(text),
        DeValue::Float(f) => parse_fraction(f.as_str()),
        _ => {
            return Err(document::mismatch(
                value,
                key,
                "a fraction such as \"3%\" or 0.03",
                at,
            ));
        }
    };
    parsed.map_err(|why| at.at(value.span(), key, why))
}

fn backend(value: &Value<'_>, at: &Locator<'_>) -> Result<BackendChoice, SpecError> {
    let key = "run.backend";
    let name = document::text(value, key, "\"auto\"", at)?;
    name.parse::<BackendChoice>().map_err(|_| {
        let message = format!(
            "{} must be \"auto\", \"epoll\" or \"io_uring\"",
            shown(name)
        );
        at.at(value.span(), key, message)
    })
}

/// `server_cpus` and `generator_cpus`, which must not overlap.
fn cpu_sets(
    table: &Table<'_>,
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<(Vec<usize>, Vec<usize>), SpecError> {
    let default_generator = if catalog.cpus > 1 { "1" } else { "0" };
    let (server, _) = cpus(table, "server_cpus", "0", catalog, at)?;
    let (generator, span) = cpus(table, "generator_cpus", default_generator, catalog, at)?;
    if catalog.cpus > 1 && server.iter().any(|c| generator.contains(c)) {
        let message = "server and generator CPU sets overlap; give them disjoint CPUs (e.g. server_cpus = \"0\", generator_cpus = \"1\")";
        return Err(at.at(span, "run.generator_cpus", message));
    }
    Ok((server, generator))
}

fn cpus(
    table: &Table<'_>,
    name: &str,
    default: &str,
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<(Vec<usize>, Range<usize>), SpecError> {
    let key = format!("run.{name}");
    let (text, span) = match table.get(name).map(|f| f.value) {
        None => (default.to_string(), table.span.clone()),
        Some(value) => match value.get_ref() {
            DeValue::String(text) => (text.to_string(), value.span()),
            DeValue::Integer(_) => (
                document::integer(value, &key, 0..=i64::MAX, at)?.to_string(),
                value.span(),
            ),
            _ => {
                return Err(document::mismatch(
                    value,
                    &key,
                    "a CPU list such as \"0\" or \"0-1\"",
                    at,
                ));
            }
        },
    };
    parse_cpu_list(&text, catalog.cpus)
        .map(|list| (list, span.clone()))
        .map_err(|why| at.at(span, key, why))
}

/// The req/s precision a run stored before it was recorded with the run
/// (schema 4) aimed for, read from its spec text without resolving it (its
/// targets may no longer exist): `None` when the spec set no goal or no
/// longer parses.
#[must_use]
pub fn precision_goal(spec_text: &str) -> Option<PrecisionGoal> {
    let document: toml::Table = spec_text.parse().ok()?;
    let run = document.get("run")?.as_table()?;
    let budget = match run.get("budget") {
        Some(toml::Value::String(text)) => parse_duration(text).ok(),
        Some(toml::Value::Integer(seconds)) => {
            u64::try_from(*seconds).ok().map(Duration::from_secs)
        }
        Some(toml::Value::Float(seconds)) => Duration::try_from_secs_f64(*seconds).ok(),
        _ => None,
    };
    let fraction = match run.get("until_ci") {
        Some(toml::Value::String(text)) => parse_fraction(text).ok(),
        Some(toml::Value::Float(f)) => parse_fraction(&f.to_string()).ok(),
        _ => None,
    };
    let fraction = fraction.or(budget.map(|_| DEFAULT_BUDGET_GOAL))?;
    Some(PrecisionGoal {
        fraction,
        budget_s: budget.map(|b| b.as_secs_f64()),
    })
}
