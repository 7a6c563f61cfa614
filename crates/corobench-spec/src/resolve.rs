//! Raw spec → validated plan: defaults filled, every value checked once,
//! sweeps expanded into scenarios.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use toml::Spanned;

use crate::catalog::Catalog;
use crate::error::{Locator, SpecError};
use corobench_model::{BackendChoice, MAX_PIPELINE, ScenarioKey, Schedule};

use crate::plan::{Body, Measurement, Plan, PlannedScenario, SkippedTarget, Trials, Workload};
use crate::raw::{RawRun, RawSpec, RawTargets, RawValues, RawWorkload};
use crate::values::{parse_cpu_list, parse_duration, parse_fraction};

/// Connections per scenario when the spec names none.
pub const DEFAULT_CONNECTIONS: u32 = 64;

/// Resolves a spec text into a plan.
///
/// # Errors
/// Any syntax error, unknown key, unknown target or parameter, impossible
/// value or CPU set, naming the file, line and key.
pub fn resolve(text: &str, path: Option<&Path>, catalog: &Catalog) -> Result<Plan, SpecError> {
    let at = Locator::new(path, text);
    let raw: RawSpec = toml::from_str(text).map_err(|e| {
        let position = e
            .span()
            .map(|span| crate::error::line_column(text, span.start));
        SpecError {
            file: at.file.clone(),
            position,
            key: None,
            message: e.message().trim().to_string(),
        }
    })?;
    let (targets, skipped_targets) = select_targets(&raw, catalog, &at)?;
    let sweeps = parameter_sweeps(&raw, &targets, catalog, &at)?;
    let settings = run_settings(&raw.run, catalog, &at)?;
    let workloads = workloads(&raw, path, settings.measurement.generator_threads, &at)?;
    let mut scenarios = Vec::new();
    for target in &targets {
        for parameters in &sweeps[target] {
            for (workload, schedules) in &workloads {
                for schedule in schedules {
                    scenarios.push(scenario(
                        scenarios.len(),
                        target,
                        parameters,
                        workload,
                        *schedule,
                        &settings,
                        catalog,
                    ));
                }
            }
        }
    }
    Ok(Plan {
        name: raw.name.unwrap_or_else(|| default_name(path)),
        description: raw.description.unwrap_or_default(),
        spec_text: text.to_string(),
        spec_path: path.map(Path::to_path_buf),
        trials: settings.trials,
        seed: settings.seed,
        server_cpus: settings.server_cpus,
        generator_cpus: settings.generator_cpus,
        scenarios,
        skipped_targets,
    })
}

fn default_name(path: Option<&Path>) -> String {
    path.and_then(Path::file_stem).map_or_else(
        || "default".to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

fn scenario(
    index: usize,
    target: &str,
    parameters: &BTreeMap<String, String>,
    workload: &Workload,
    schedule: Schedule,
    settings: &Settings,
    catalog: &Catalog,
) -> PlannedScenario {
    let key = ScenarioKey::compose(target, parameters, &workload.name, &schedule);
    PlannedScenario {
        index: u32::try_from(index).unwrap_or(u32::MAX),
        key,
        target: target.to_string(),
        parameters: parameters.clone(),
        workload: workload.clone(),
        schedule,
        measurement: Measurement {
            warmup: settings
                .measurement
                .warmup
                .max(catalog.get(target).map_or(Duration::ZERO, |t| t.min_warmup)),
            ..settings.measurement
        },
        needs_database: workload.path.starts_with("/db"),
    }
}

/// The targets to measure, and those that were asked for but cannot run here.
type Selection = (Vec<String>, Vec<SkippedTarget>);

fn select_targets(
    raw: &RawSpec,
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<Selection, SpecError> {
    let requested: Vec<String> = match raw.targets.as_ref().map(|t| (t.span(), t.get_ref())) {
        None => catalog.targets.iter().map(|t| t.name.clone()).collect(),
        Some((_, RawTargets::Keyword(word))) if word == "available" || word == "all" => {
            catalog.targets.iter().map(|t| t.name.clone()).collect()
        }
        Some((span, RawTargets::Keyword(word))) => {
            return Err(at.at(
                span,
                "targets",
                format!("{word:?} is neither \"available\" nor a list of target names"),
            ));
        }
        Some((span, RawTargets::List(names))) => {
            for name in names {
                if catalog.get(name).is_none() {
                    let msg = format!(
                        "unknown target {name:?}; known targets: {}",
                        catalog.names()
                    );
                    return Err(at.at(at.find_within(span, &format!("{name:?}")), "targets", msg));
                }
            }
            names.clone()
        }
    };
    let (mut run, mut skipped) = (Vec::new(), Vec::new());
    for name in requested {
        match catalog.get(&name).map(|t| t.available.clone()) {
            Some(Ok(())) if !run.contains(&name) => run.push(name),
            Some(Err(reason)) => skipped.push(SkippedTarget {
                target: name,
                reason,
            }),
            _ => {}
        }
    }
    Ok((run, skipped))
}

/// Every combination of swept parameter values, per target.
fn parameter_sweeps(
    raw: &RawSpec,
    targets: &[String],
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<BTreeMap<String, Vec<BTreeMap<String, String>>>, SpecError> {
    let mut sweeps: BTreeMap<String, Vec<BTreeMap<String, String>>> = targets
        .iter()
        .map(|t| (t.clone(), vec![BTreeMap::new()]))
        .collect();
    for (target, values) in &raw.parameters {
        let Some(known) = catalog.get(target) else {
            let msg = format!(
                "unknown target {target:?}; known targets: {}",
                catalog.names()
            );
            return Err(at.whole(Some(&format!("parameters.{target}")), msg));
        };
        let Some(combinations) = sweeps.get_mut(target) else {
            continue;
        }; // asked for, but skipped
        for (name, spanned) in values {
            let key = format!("parameters.{target}.{name}");
            let Some(domain) = known.parameters.get(name) else {
                let names: Vec<&str> = known.parameters.keys().map(String::as_str).collect();
                let msg = format!(
                    "{target} has no parameter {name:?}; it has: {}",
                    names.join(", ")
                );
                return Err(at.at(spanned.span(), key, msg));
            };
            let list = spanned.get_ref().values();
            if list.is_empty() {
                return Err(at.at(
                    spanned.span(),
                    key,
                    "an empty list sweeps nothing; give at least one value",
                ));
            }
            for value in &list {
                domain
                    .check(value)
                    .map_err(|why| at.at(spanned.span(), &key, format!("{value:?} {why}")))?;
            }
            *combinations = product(combinations, name, &list);
        }
    }
    Ok(sweeps)
}

fn product(
    combinations: &[BTreeMap<String, String>],
    name: &str,
    values: &[String],
) -> Vec<BTreeMap<String, String>> {
    combinations
        .iter()
        .flat_map(|base| {
            values.iter().map(move |value| {
                let mut next = base.clone();
                next.insert(name.to_string(), value.clone());
                next
            })
        })
        .collect()
}

/// `[run]` with its defaults.
#[derive(Debug)]
struct Settings {
    trials: Trials,
    seed: u64,
    server_cpus: Vec<usize>,
    generator_cpus: Vec<usize>,
    measurement: Measurement,
}

fn run_settings(run: &RawRun, catalog: &Catalog, at: &Locator<'_>) -> Result<Settings, SpecError> {
    let duration = |field: &Option<Spanned<String>>,
                    key: &str,
                    default: Duration|
     -> Result<Duration, SpecError> {
        field.as_ref().map_or(Ok(default), |s| {
            parse_duration(s.get_ref()).map_err(|why| at.at(s.span(), format!("run.{key}"), why))
        })
    };
    let integer = |field: &Option<Spanned<i64>>,
                   key: &str,
                   default: u32,
                   min: u32|
     -> Result<u32, SpecError> {
        field
            .as_ref()
            .map_or(Ok(default), |s| match u32::try_from(*s.get_ref()) {
                Ok(n) if n >= min => Ok(n),
                _ => Err(at.at(
                    s.span(),
                    format!("run.{key}"),
                    format!("must be an integer ≥ {min}"),
                )),
            })
    };
    let cpus = |field: &Option<Spanned<String>>,
                key: &str,
                default: &str|
     -> Result<(Vec<usize>, std::ops::Range<usize>), SpecError> {
        let (text, span) = field.as_ref().map_or((default.to_string(), 0..0), |s| {
            (s.get_ref().clone(), s.span())
        });
        parse_cpu_list(&text, catalog.cpus)
            .map(|list| (list, span.clone()))
            .map_err(|why| at.at(span, format!("run.{key}"), why))
    };
    let (server_cpus, _) = cpus(&run.server_cpus, "server_cpus", "0")?;
    let default_generator = if catalog.cpus > 1 { "1" } else { "0" };
    let (generator_cpus, span) = cpus(&run.generator_cpus, "generator_cpus", default_generator)?;
    if catalog.cpus > 1 && server_cpus.iter().any(|c| generator_cpus.contains(c)) {
        let msg = "server and generator CPU sets overlap; give them disjoint CPUs (e.g. server_cpus = \"0\", generator_cpus = \"1\")";
        return Err(at.at(span, "run.generator_cpus", msg));
    }
    let trials = integer(&run.trials, "trials", 3, 1)?;
    let until_ci = run
        .until_ci
        .as_ref()
        .map(|s| parse_fraction(s.get_ref()).map_err(|why| at.at(s.span(), "run.until_ci", why)))
        .transpose()?;
    let max = integer(&run.max_trials, "max_trials", trials.max(20), trials)?;
    let backend = run.backend.as_ref().map_or(Ok(BackendChoice::Auto), |s| {
        s.get_ref()
            .parse::<BackendChoice>()
            .map_err(|why| at.at(s.span(), "run.backend", why))
    })?;
    let generator_threads = u32::try_from(generator_cpus.len()).unwrap_or(1);
    let measurement = Measurement {
        duration: duration(&run.duration, "duration", Duration::from_secs(10))?,
        warmup: duration(&run.warmup, "warmup", Duration::from_secs(2))?,
        idle: duration(&run.idle, "idle", Duration::from_secs(1))?,
        timeout: duration(&run.timeout, "timeout", Duration::from_secs(10))?,
        generator_threads: integer(
            &run.generator_threads,
            "generator_threads",
            generator_threads,
            1,
        )?,
        backend,
    };
    if measurement.duration.is_zero() {
        return Err(at.whole(Some("run.duration"), "must be longer than 0"));
    }
    let seed = run.seed.as_ref().map_or(Ok(1), |s| {
        u64::try_from(*s.get_ref())
            .map_err(|_| at.at(s.span(), "run.seed", "must be a non-negative integer"))
    })?;
    Ok(Settings {
        trials: Trials {
            min: trials,
            until_ci,
            max,
        },
        seed,
        server_cpus,
        generator_cpus,
        measurement,
    })
}

/// Each workload with the schedules it runs under.
fn workloads(
    raw: &RawSpec,
    path: Option<&Path>,
    generator_threads: u32,
    at: &Locator<'_>,
) -> Result<Vec<(Workload, Vec<Schedule>)>, SpecError> {
    if raw.workloads.is_empty() {
        return Err(at.whole(
            Some("workloads"),
            "no workload: add at least one [[workloads]] with a name and a path",
        ));
    }
    let mut seen = Vec::new();
    raw.workloads
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let key = format!("workloads[{i}]");
            if seen.contains(w.name.get_ref()) {
                return Err(at.at(
                    w.name.span(),
                    format!("{key}.name"),
                    "this name is already used by another workload",
                ));
            }
            seen.push(w.name.get_ref().clone());
            let workload = workload(w, path, &key, at)?;
            let connections = w.connections.as_ref().or(raw.schedule.connections.as_ref());
            let rates = w.rates.as_ref().or(raw.schedule.rates.as_ref());
            let schedules = schedules(connections, rates, generator_threads, &key, at)?;
            let wire = wire_mode(w, raw, &key, at)?;
            let schedules = schedules
                .into_iter()
                .map(|s| {
                    s.with_keepalive(wire.keepalive)
                        .with_pipeline(wire.pipeline)
                })
                .collect();
            Ok((workload, schedules))
        })
        .collect()
}

fn workload(
    w: &RawWorkload,
    path: Option<&Path>,
    key: &str,
    at: &Locator<'_>,
) -> Result<Workload, SpecError> {
    let name = w.name.get_ref();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(at.at(
            w.name.span(),
            format!("{key}.name"),
            "use letters, digits, '-', '_' and '.' only",
        ));
    }
    if !w.path.get_ref().starts_with('/') || w.path.get_ref().contains(char::is_whitespace) {
        return Err(at.at(
            w.path.span(),
            format!("{key}.path"),
            "must start with / and contain no spaces, e.g. \"/io?ms=10\"",
        ));
    }
    let method = w
        .method
        .as_ref()
        .map_or_else(|| "GET".to_string(), |m| m.get_ref().clone());
    if !method.chars().all(|c| c.is_ascii_uppercase()) || method.is_empty() {
        let span = w.method.as_ref().map_or(0..0, Spanned::span);
        return Err(at.at(
            span,
            format!("{key}.method"),
            "must be an upper-case HTTP method such as GET or POST",
        ));
    }
    let body = match (&w.body, &w.body_file) {
        (Some(_), Some(file)) => {
            return Err(at.at(
                file.span(),
                format!("{key}.body_file"),
                "give either body or body_file, not both",
            ));
        }
        (Some(text), None) => Body::Text(text.clone()),
        (None, Some(file)) => {
            let base = path
                .and_then(Path::parent)
                .unwrap_or_else(|| Path::new("."));
            let resolved = base.join(file.get_ref());
            if !resolved.is_file() {
                let msg = format!(
                    "{} is not a readable file (paths are relative to the spec)",
                    resolved.display()
                );
                return Err(at.at(file.span(), format!("{key}.body_file"), msg));
            }
            Body::File(resolved)
        }
        (None, None) => Body::Empty,
    };
    let headers = w
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Workload {
        name: w.name.get_ref().clone(),
        method,
        path: w.path.get_ref().clone(),
        headers,
        body,
    })
}

fn schedules(
    connections: Option<&Spanned<RawValues>>,
    rates: Option<&Spanned<RawValues>>,
    generator_threads: u32,
    key: &str,
    at: &Locator<'_>,
) -> Result<Vec<Schedule>, SpecError> {
    let counts: Vec<u32> = match connections {
        None => vec![DEFAULT_CONNECTIONS],
        Some(spanned) => positive_list(spanned, &format!("{key}.connections"), at)?
            .into_iter()
            .map(|n| u32::try_from(n as u64).unwrap_or(u32::MAX))
            .collect(),
    };
    if let Some((span, &low)) = connections.map(Spanned::span).zip(counts.iter().min()) {
        if low < generator_threads {
            let msg = format!(
                "{low} connections cannot be split over {generator_threads} generator threads"
            );
            return Err(at.at(span, format!("{key}.connections"), msg));
        }
    }
    let Some(rates) = rates else {
        return Ok(counts.into_iter().map(Schedule::closed).collect());
    };
    let rates = positive_list(rates, &format!("{key}.rates"), at)?;
    Ok(rates
        .iter()
        .flat_map(|&rate_per_s| {
            counts
                .iter()
                .map(move |&connections| Schedule::open(rate_per_s, connections))
        })
        .collect())
}

/// How a workload's connections carry requests.
struct WireMode {
    keepalive: bool,
    pipeline: u32,
}

/// A workload's `keepalive` and `pipeline` (or `[schedule]`'s), and whether
/// they go together with each other and with its rates.
fn wire_mode(
    w: &RawWorkload,
    raw: &RawSpec,
    key: &str,
    at: &Locator<'_>,
) -> Result<WireMode, SpecError> {
    let keepalive = w.keepalive.as_ref().or(raw.schedule.keepalive.as_ref());
    let Some(pipeline) = w.pipeline.as_ref().or(raw.schedule.pipeline.as_ref()) else {
        return Ok(WireMode {
            keepalive: keepalive.is_none_or(|k| *k.get_ref()),
            pipeline: 1,
        });
    };
    let depth = *pipeline.get_ref();
    let refuse = |msg: String| Err(at.at(pipeline.span(), format!("{key}.pipeline"), msg));
    let Some(depth) = u32::try_from(depth)
        .ok()
        .filter(|d| (1..=MAX_PIPELINE).contains(d))
    else {
        return refuse(format!(
            "{depth} must be from 1 to {MAX_PIPELINE} requests in flight per connection"
        ));
    };
    let rates = w.rates.as_ref().or(raw.schedule.rates.as_ref());
    if depth > 1 && keepalive.is_some_and(|k| !*k.get_ref()) {
        return refuse("pipelining needs kept-alive connections: drop keepalive = false".into());
    }
    if depth > 1 && rates.is_some() {
        return refuse(
            "pipelining is for closed loops: an open loop (rates) sends one request \
             at a time per connection"
                .into(),
        );
    }
    Ok(WireMode {
        keepalive: keepalive.is_none_or(|k| *k.get_ref()),
        pipeline: depth,
    })
}

fn positive_list(
    spanned: &Spanned<RawValues>,
    key: &str,
    at: &Locator<'_>,
) -> Result<Vec<f64>, SpecError> {
    let values = spanned.get_ref().values();
    if values.is_empty() {
        return Err(at.at(
            spanned.span(),
            key,
            "an empty list sweeps nothing; give at least one value",
        ));
    }
    values
        .iter()
        .map(|v| match v.parse::<f64>() {
            Ok(n) if n.is_finite() && n >= 1.0 => Ok(n),
            _ => Err(at.at(
                spanned.span(),
                key,
                format!("{v:?} must be a positive number"),
            )),
        })
        .collect()
}
