//! `targets` and `[parameters.<target>]`: which targets run, and every
//! combination of the parameter values swept for each.

use std::collections::{BTreeMap, HashSet};

use toml::de::DeValue;

use crate::catalog::Catalog;
use crate::document::{self, Field, Table, Value};
use crate::error::{Locator, SpecError, shown};
use crate::limits::MAX_SCENARIOS;
use crate::plan::SkippedTarget;

use super::Sweeps;
use super::repeats::refuse_repeats;

/// The targets a spec asked for: those that run here, and those skipped.
#[derive(Debug)]
pub(super) struct Selection {
    /// Every target asked for, runnable or not.
    pub requested: HashSet<String>,
    /// Those that can run here, in the spec's order.
    pub run: Vec<String>,
    pub skipped: Vec<SkippedTarget>,
}

pub(super) fn select(
    field: Option<&Field<'_>>,
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<Selection, SpecError> {
    // Program targets measure something else than a server under load: a
    // spec names them.
    let every = || {
        catalog
            .targets
            .iter()
            .filter(|t| t.program.is_none())
            .map(|t| t.name.clone())
            .collect()
    };
    let requested: Vec<String> = match field.map(|f| f.value) {
        None => every(),
        Some(value) => match value.get_ref() {
            DeValue::String(word) if word == "available" || word == "all" => every(),
            DeValue::String(word) => {
                let message = format!(
                    "{} is neither \"available\" nor a list of target names; write targets = \"available\" or e.g. targets = [\"go-nethttp\"]",
                    shown(word)
                );
                return Err(at.at(value.span(), "targets", message));
            }
            _ => named(value, catalog, at)?,
        },
    };
    let mut selection = Selection {
        requested: requested.iter().cloned().collect(),
        run: Vec::new(),
        skipped: Vec::new(),
    };
    for name in requested {
        match catalog.get(&name).map(|t| &t.available) {
            Some(Ok(())) => selection.run.push(name),
            Some(Err(reason)) => selection.skipped.push(SkippedTarget {
                target: name,
                reason: reason.clone(),
            }),
            None => {}
        }
    }
    Ok(selection)
}

/// `baseline = "go-nethttp"`: the target every other is compared with in
/// reports, one the spec asks for (it may be skipped here).
pub(super) fn baseline(
    field: Option<&Field<'_>>,
    selection: &Selection,
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<Option<String>, SpecError> {
    let Some(field) = field else {
        return Ok(None);
    };
    let name = document::text(field.value, "baseline", "\"go-nethttp\"", at)?;
    let message = if catalog.get(name).is_none() {
        format!(
            "unknown target {}; known targets: {}",
            shown(name),
            catalog.names()
        )
    } else if !selection.requested.contains(name) {
        format!(
            "{} is not among this spec's targets; add it to `targets`, or name one of them",
            shown(name)
        )
    } else {
        return Ok(Some(name.to_string()));
    };
    Err(at.at(field.value.span(), "baseline", message))
}

/// A list of target names: each known, none twice, at least one.
fn named(value: &Value<'_>, catalog: &Catalog, at: &Locator<'_>) -> Result<Vec<String>, SpecError> {
    let expected = "\"available\" or a list of target names such as [\"go-nethttp\"]";
    let items = document::list(value, "targets", expected, at)?;
    if items.is_empty() {
        let message =
            "an empty list selects no target; name at least one, or write targets = \"available\"";
        return Err(at.at(value.span(), "targets", message));
    }
    let mut names = Vec::with_capacity(items.len());
    for item in items {
        let name = document::text(item, "targets", "\"go-nethttp\"", at)?;
        if catalog.get(name).is_none() {
            let message = format!(
                "unknown target {}; known targets: {}",
                shown(name),
                catalog.names()
            );
            return Err(at.at(item.span(), "targets", message));
        }
        names.push(name.to_string());
    }
    let items: Vec<&Value<'_>> = items.iter().collect();
    refuse_repeats(value, &items, &names, "targets", |i| names[i].clone(), at)?;
    Ok(names)
}

/// Every combination of swept parameter values, per target that runs.
/// Parameters of a target asked for but skipped here are checked all the
/// same; parameters of a target the spec does not ask for are refused.
pub(super) fn parameter_sweeps(
    field: Option<&Field<'_>>,
    selection: &Selection,
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<Sweeps, SpecError> {
    let mut sweeps: Sweeps = selection
        .run
        .iter()
        .map(|t| (t.clone(), vec![BTreeMap::new()]))
        .collect();
    let Some(field) = field else {
        return Ok(sweeps);
    };
    let per_target = Table::read(field.value, "parameters", &[], at)?;
    for target in &per_target.fields {
        check_asked_for(target, selection, catalog, at)?;
        let mut combinations = vec![BTreeMap::new()];
        let values = Table::read(target.value, &target.path, &[], at)?;
        for parameter in &values.fields {
            let list = parameter_values(parameter, target.name, catalog, at)?;
            let count = combinations.len().saturating_mul(list.len());
            if count > MAX_SCENARIOS {
                let message = format!(
                    "these sweeps give {} more than {MAX_SCENARIOS} parameter combinations; sweep fewer values",
                    target.name
                );
                return Err(at.at(parameter.value.span(), &parameter.path, message));
            }
            combinations = product(&combinations, parameter.name, &list);
        }
        if let Some((_, runs)) = sweeps.iter_mut().find(|(t, _)| t == target.name) {
            *runs = combinations;
        }
    }
    Ok(sweeps)
}

fn check_asked_for(
    target: &Field<'_>,
    selection: &Selection,
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<(), SpecError> {
    let message = if catalog.get(target.name).is_none() {
        format!(
            "unknown target {}; known targets: {}",
            shown(target.name),
            catalog.names()
        )
    } else if !selection.requested.contains(target.name) {
        format!(
            "{} is not among this spec's targets, so these parameters would be ignored; add it to `targets` or remove [parameters.{}]",
            shown(target.name),
            target.name
        )
    } else {
        return Ok(());
    };
    Err(at.at(target.key_span.clone(), &target.path, message))
}

/// One parameter's values, each in the manifest's domain, none twice.
fn parameter_values(
    parameter: &Field<'_>,
    target: &str,
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<Vec<String>, SpecError> {
    let key = &parameter.path;
    let known = catalog.get(target).map(|t| &t.parameters);
    let Some(domain) = known.and_then(|p| p.get(parameter.name)) else {
        let names: Vec<&str> = known
            .into_iter()
            .flat_map(|p| p.keys().map(String::as_str))
            .collect();
        let message = format!(
            "{target} has no parameter {}; it has: {}",
            shown(parameter.name),
            names.join(", ")
        );
        return Err(at.at(parameter.key_span.clone(), key, message));
    };
    let items = document::one_or_many(parameter.value, key, at)?;
    let mut values = Vec::with_capacity(items.len());
    for item in &items {
        let written = scalar(item, key, at)?;
        let value = domain
            .canonical(&written)
            .map_err(|why| at.at(item.span(), key, format!("{} {why}", shown(&written))))?;
        values.push(value);
    }
    refuse_repeats(
        parameter.value,
        &items,
        &values,
        key,
        |i| values[i].clone(),
        at,
    )?;
    Ok(values)
}

/// A parameter value as text: parameters are integers or names.
fn scalar(value: &Value<'_>, key: &str, at: &Locator<'_>) -> Result<String, SpecError> {
    match value.get_ref() {
        DeValue::String(text) => Ok(text.to_string()),
        DeValue::Boolean(b) => Ok(b.to_string()),
        DeValue::Integer(_) => {
            Ok(document::integer(value, key, i64::MIN..=i64::MAX, at)?.to_string())
        }
        _ => Err(document::mismatch(
            value,
            key,
            "an integer, a name in quotes, or a list of them",
            at,
        )),
    }
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
